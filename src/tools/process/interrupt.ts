/**
 * Ctrl-C for a background process without a terminal. On a terminal, ^C is
 * the line discipline's business: it sends SIGINT to the foreground process
 * group. A pipe has no line discipline, so the byte would only be data: here
 * SIGINT goes to the process's group instead, which is what the terminal
 * would have done (the wrapper leads that group and survives it, so the
 * command's own exit code, 130 or what its trap chose, is recorded).
 */

import type { Environment } from "../../core/environment.js";
import type { BackgroundProcess } from "./background-process.js";

/**
 * SIGINT to the group `pgid` leads, while its leader is still the wrapper
 * (not a zombie, still leading the group: a reused PID would lead another).
 * Exit 3 when it is gone. Without /proc, the group is signalled unchecked.
 */
export function interruptScript(pgid: number): string {
  const p = Math.floor(pgid);
  return [
    `if [[ -r /proc/${p}/stat ]]; then builtin read -r _ _ __sw_s _ __sw_pg _ < /proc/${p}/stat 2>/dev/null && [[ $__sw_s != Z && $__sw_pg == ${p} ]] || builtin exit 3`,
    `elif [[ -d /proc/self ]]; then builtin exit 3; fi`,
    `builtin kill -INT -- -${p} 2>/dev/null || builtin exit 3`,
  ].join("\n");
}

/** Sends SIGINT to a running process's group (one round trip). False when it has ended. */
export async function interrupt(session: Environment, process: BackgroundProcess): Promise<boolean> {
  if (process.status !== "running") return false;
  const result = await session.execute(interruptScript(process.pid), { isolated: true, timeoutMs: 30_000 });
  return result.exitCode === 0;
}
