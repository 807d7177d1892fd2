/** A local session's state dir whose owner died (backends/shared/leftover-source.ts). */

import { rmSync } from "node:fs";
import { deadOwnersDirs, type LeftoverSource } from "../shared/leftover-source.js";

const KIND = "state-dir";

export const localLeftovers: LeftoverSource = {
  find: () =>
    Promise.resolve(deadOwnersDirs(/^shellwright-(?!ssh-)/).map((d) => ({ kind: KIND, what: d.path, owner: d.owner }))),
  remove: (found) => {
    const mine = found.filter((l) => l.kind === KIND);
    for (const item of mine) rmSync(item.what, { recursive: true, force: true });
    return Promise.resolve(mine);
  },
};
