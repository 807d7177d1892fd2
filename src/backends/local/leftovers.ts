/** A local session's state dir whose owner died (backends/shared/leftover-source.ts). */

import { rmSync } from "node:fs";
import { deadOwnersDirs, type LeftoverSource } from "../shared/leftover-source.js";
import { ownerPid } from "../shared/owner.js";
import { endLeftoverJobs } from "./leftover-jobs.js";
import { removeLeftoverDirs } from "./checkpoint-dirs.js";

const KIND = "state-dir";

export const localLeftovers: LeftoverSource = {
  find: () =>
    Promise.resolve(deadOwnersDirs(/^shellwright-(?!ssh-)/).map((d) => ({ kind: KIND, what: d.path, owner: d.owner }))),
  // The jobs first: the dir holds what finds them (the session's mark, cgroup and groups).
  async remove(found) {
    const mine = found.filter((l) => l.kind === KIND);
    for (const item of mine) {
      await endLeftoverJobs(item.what, ownerPid(item.owner));
      removeLeftoverDirs(item.what);
      rmSync(item.what, { recursive: true, force: true });
    }
    return mine;
  },
  // Its recorded process groups and what carries its mark, from the store's dir (its state dir).
  removeUnfinished: (_name, dir) => endLeftoverJobs(dir),
};
