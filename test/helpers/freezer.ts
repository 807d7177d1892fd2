/**
 * Freezes one process with the cgroup freezer, as `docker pause` freezes a
 * container: the process sits in the kernel (state D or S), neither stopped
 * nor traced, until thawed. Needs root and a writable freezer (cgroup v1's
 * `freezer` hierarchy or cgroup v2's `cgroup.freeze`); `noFreezer` says why a
 * case cannot run. Only the cgroup made here is touched, and removed.
 */

import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";

const V1 = "/sys/fs/cgroup/freezer";
const V2 = existsSync("/sys/fs/cgroup/cgroup.controllers") ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified";

function probe(): string | undefined {
  if (process.getuid?.() !== 0) return "needs root to move a process into a freezer cgroup";
  if (existsSync(`${V1}/tasks`)) return undefined;
  if (existsSync(`${V2}/cgroup.procs`)) return undefined;
  return "no writable cgroup freezer (v1 freezer or v2 cgroup.freeze)";
}

/** Why a freezer case cannot run here, or undefined when it can. */
export const noFreezer: string | undefined = probe();

export interface Frozen {
  thaw(): void;
}

/** Freezes `pid` until thaw(), which also puts it back where it was and removes the cgroup. */
export function freeze(pid: number): Frozen {
  const name = `shellwright-test-${randomBytes(4).toString("hex")}`;
  const v1 = existsSync(`${V1}/tasks`);
  // v1 writes FROZEN/THAWED to freezer.state and moves back to the root; v2 writes 1/0 to cgroup.freeze and
  // moves back to the cgroup the process came from.
  const root = v1 ? V1 : V2;
  const [control, frozen, thawed] = v1 ? ["freezer.state", "FROZEN", "THAWED"] : ["cgroup.freeze", "1", "0"];
  const home = v1 ? "/" : (readFileSync(`/proc/${pid}/cgroup`, "utf8").match(/^0::(.*)$/m)?.[1] ?? "/");
  const dir = `${root}/${name}`;
  mkdirSync(dir);
  writeFileSync(`${dir}/cgroup.procs`, String(pid));
  writeFileSync(`${dir}/${control}`, frozen);
  return {
    thaw() {
      writeFileSync(`${dir}/${control}`, thawed);
      emptyAndRemove(dir, `${root}${home === "/" ? "" : home}/cgroup.procs`);
    },
  };
}

/**
 * Moves every process of the cgroup `dir` to `home` and removes it. A thawed
 * process may fork while it is moved (the launcher starts the next job), so
 * the move is repeated until the cgroup is empty; a pid gone meanwhile is
 * skipped.
 */
function emptyAndRemove(dir: string, home: string): void {
  for (let round = 0; ; round++) {
    const pids = readFileSync(`${dir}/cgroup.procs`, "utf8").split("\n").filter(Boolean);
    for (const pid of pids) {
      try {
        writeFileSync(home, pid);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
      }
    }
    try {
      rmdirSync(dir);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EBUSY" || round >= 100) throw error;
    }
  }
}
