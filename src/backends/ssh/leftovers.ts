/**
 * An ssh session's control dir (its master) whose owner died
 * (backends/shared/leftover-source.ts). When the dir holds a record of the
 * remote side (remote-record.ts), that goes first: the session's jobs on the
 * host and the remote dir it made, through the master while it still runs
 * (or a new connection once it has gone), since the record goes with the dir.
 */

import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { shellQuote } from "../../core/script.js";
import { deadOwnersDirs, type LeftoverSource } from "../shared/leftover-source.js";
import { sshArgs } from "./command.js";
import { readRemoteRecord, remotePruneScript } from "./remote-record.js";

const KIND = "ssh-control";
/** A host that stopped answering must not hold `--prune` for long. */
const REMOTE_LIMIT_MS = 60_000;

export const sshLeftovers: LeftoverSource = {
  find: () =>
    Promise.resolve(deadOwnersDirs(/^shellwright-ssh-/).map((d) => ({ kind: KIND, what: d.path, owner: d.owner }))),
  remove: (found) => {
    const mine = found.filter((l) => l.kind === KIND);
    for (const item of mine) {
      const master = join(item.what, "master");
      const record = readRemoteRecord(item.what);
      if (record !== undefined) {
        // ControlMaster=no (the first value of an option wins): never leave a new master behind.
        const args = sshArgs(
          { ...record.target, controlPath: master },
          `bash -c ${shellQuote(remotePruneScript(record))}`,
        );
        spawnSync(record.sshPath, ["-o", "ControlMaster=no", ...args], { stdio: "ignore", timeout: REMOTE_LIMIT_MS });
      }
      // A master left running by a dead owner: ask it to exit, then drop its socket's directory.
      spawnSync("ssh", ["-o", `ControlPath=${master}`, "-O", "exit", "shellwright-leftover"], {
        stdio: "ignore",
        timeout: 10_000,
      });
      rmSync(item.what, { recursive: true, force: true });
    }
    return Promise.resolve(mine);
  },
};
