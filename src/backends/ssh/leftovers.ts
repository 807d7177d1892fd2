/** An ssh session's control dir (its master) whose owner died (backends/shared/leftover-source.ts). */

import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { deadOwnersDirs, type LeftoverSource } from "../shared/leftover-source.js";

const KIND = "ssh-control";

export const sshLeftovers: LeftoverSource = {
  find: () =>
    Promise.resolve(deadOwnersDirs(/^shellwright-ssh-/).map((d) => ({ kind: KIND, what: d.path, owner: d.owner }))),
  remove: (found) => {
    const mine = found.filter((l) => l.kind === KIND);
    for (const item of mine) {
      // A master left running by a dead owner: ask it to exit, then drop its socket's directory.
      spawnSync("ssh", ["-o", `ControlPath=${join(item.what, "master")}`, "-O", "exit", "shellwright-leftover"], {
        stdio: "ignore",
        timeout: 10_000,
      });
      rmSync(item.what, { recursive: true, force: true });
    }
    return Promise.resolve(mine);
  },
};
