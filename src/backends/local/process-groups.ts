/**
 * Signalling a call's process group on this machine: each call (and each
 * fast-path job) leads one, the unit a timeout or close() kills.
 */

import { readFileSync } from "node:fs";
import type { KillSignal } from "../../core/transport.js";

export function killGroup(pid: number, signal: KillSignal): void {
  try {
    process.kill(-pid, signal === "TERM" ? "SIGTERM" : "SIGKILL");
  } catch {
    // the group is already empty
  }
}

export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A process's start time (`/proc/PID/stat` field 22, clock ticks since boot),
 * or undefined when it is gone or there is no /proc. With the PID it names
 * one process for good: PIDs are reused within minutes on a busy machine.
 */
export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(") ") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** True when `pid` now names another process than the one that started at `startTime` (a newcomer on a reused PID). */
export function reusedPid(pid: number, startTime: string | undefined): boolean {
  if (startTime === undefined) return false;
  const now = startTimeOf(pid);
  return now !== undefined && now !== startTime;
}
