/**
 * Signalling a call's process group on this machine: each call (and each
 * fast-path job) leads one, the unit a timeout or close() kills.
 */

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
