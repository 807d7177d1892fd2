/**
 * The bash that ends many background processes in one round trip, through
 * the backends' one kill sweep (src/core/sweep-script.ts): for `close()`,
 * every running PTY process at once, and for `kill` of a process that already
 * ended, what it left running. Its targets are the processes carrying a
 * process's mark (SHELLWRIGHT_BG_ID, process-scripts.ts), so a child that left
 * the group or the PTY's session with setsid() is found too, and the members
 * of the processes' groups. TERM, the grace, then KILL.
 */

import { parseSweep, sweepScript } from "../../core/sweep-script.js";
import { shellQuote } from "../../core/script.js";
import { reapEntry, type BackgroundProcess } from "./background-process.js";
import { MARKER_VARIABLE, reapScript } from "./process-scripts.js";

export interface EndEntry {
  /** The process's id, whose mark its whole tree carries. */
  id: string;
  /** The wrapper's PID, which is also its process group's id. */
  pgid: number;
}

const sweepIn = (sweep: string): string => `"$BASH" -c ${shellQuote(sweep)} </dev/null 2>/dev/null`;

/**
 * Ends running processes and everything they started, together. A PTY's
 * helper is among the targets and ends the PTY's whole session on TERM (also
 * a job without the mark), within its own grace, shorter than this one.
 * Without /proc: TERM to each group, up to `graceMs` for them to go, KILL.
 */
export function endRunningScript(entries: readonly EndEntry[], graceMs: number): string {
  if (entries.length === 0) return "";
  const marks = entries.map((entry) => `${MARKER_VARIABLE}=${entry.id}`);
  const groups = entries.map((entry) => entry.pgid);
  const negated = groups.map((group) => `-${group}`).join(" ");
  const checks = Math.max(1, Math.ceil(graceMs / 50));
  return [
    `if [[ -d /proc/self ]]; then ${sweepIn(sweepScript({ marks, groups }, "TERM", graceMs))} >/dev/null`,
    `else builtin kill -TERM -- ${negated} 2>/dev/null`,
    // bash's kill succeeds when any one of its targets could be signalled: while any group is left.
    `  for ((__sw_n = 0; __sw_n < ${checks}; __sw_n++)); do builtin kill -0 -- ${negated} 2>/dev/null || break; command sleep 0.05; done`,
    `  builtin kill -KILL -- ${negated} 2>/dev/null; fi`,
  ].join("\n");
}

/**
 * Ends what processes that already ended left running, and prints the
 * sweep's report (parseLeftovers). A group is taken only while its leader,
 * the ended wrapper, is gone: a live process with that PID is a newcomer.
 * Without /proc nothing can be told apart from a stranger, so nothing is done.
 */
export function leftoversScript(entries: readonly EndEntry[], graceMs: number): string {
  const marks = entries.map((entry) => `${MARKER_VARIABLE}=${entry.id}`);
  const groups = entries.map((entry) => entry.pgid);
  const sweep = sweepScript({ marks, groups, deadLeadersOnly: true }, "TERM", graceMs);
  return `if [[ -d /proc/self ]]; then ${sweepIn(sweep)}; fi`;
}

/** How many processes a leftovers sweep ended. */
export const parseLeftovers = (output: string): number => parseSweep(output).hit.length;

/**
 * What `close()` runs, in one round trip however many processes there are:
 * the running PTY processes end together (a PTY's program has a session of
 * its own, out of the reap's reach, and its helper ends that session on TERM:
 * the reap's KILL would leave HUP-immune jobs); then the reap of every
 * process's group, and the removal of their files.
 */
export function closeScript(processes: readonly BackgroundProcess[], graceMs: number): string {
  const ptys = processes.filter((p) => p.pty !== undefined && p.status === "running");
  return [
    endRunningScript(
      ptys.map((p) => ({ id: p.id, pgid: p.pid })),
      graceMs,
    ),
    reapScript(processes.map(reapEntry), { removeFiles: true }),
  ].join("\n");
}
