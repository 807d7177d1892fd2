/** A local session's state dir whose owner died (backends/shared/leftover-source.ts). */

import { rmSync } from "node:fs";
import { deadOwnersDirs, type LeftoverSource } from "../shared/leftover-source.js";
import { ownerPid } from "../shared/owner.js";
import { endLeftoverJobs } from "./leftover-jobs.js";
import { removeLeftoverDirs } from "./checkpoint-dirs.js";
import { findBash } from "./paths.js";
import { keepUnsavedWorkspace } from "./sandbox/overlay-keep.js";

const KIND = "state-dir";

export const localLeftovers: LeftoverSource = {
  find: () =>
    Promise.resolve(deadOwnersDirs(/^shellwright-(?!ssh-)/).map((d) => ({ kind: KIND, what: d.path, owner: d.owner }))),
  // The jobs first: the dir holds what finds them (the session's mark, cgroup and groups).
  async remove(found) {
    const removed = [];
    for (const item of found.filter((l) => l.kind === KIND)) {
      await endLeftoverJobs(item.what, ownerPid(item.owner));
      if (!(await keptWorkspace(item.what))) continue;
      removeLeftoverDirs(item.what);
      rmSync(item.what, { recursive: true, force: true });
      removed.push(item);
    }
    return removed;
  },
  // Its recorded process groups and what carries its mark, from the store's dir (its state dir).
  removeUnfinished: (_name, dir) => endLeftoverJobs(dir),
};

/** A sandboxed workspace's unsaved changes, kept beside its root (sandbox/overlay-keep.ts); false: the dir must stay. */
async function keptWorkspace(dir: string): Promise<boolean> {
  try {
    const kept = await keepUnsavedWorkspace(dir, findBash());
    if (kept !== undefined)
      process.emitWarning(`A dead session's unsaved workspace changes were kept in ${kept}`, {
        code: "SHELLWRIGHT_WORKSPACE_UNSAVED",
      });
    return true;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    process.emitWarning(`${dir} is left in place: ${why}`, { code: "SHELLWRIGHT_WORKSPACE_UNSAVED" });
    return false;
  }
}
