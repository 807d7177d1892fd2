/**
 * Ends what a local session whose owner and watchdog both died left running,
 * from what its state dir recorded (owner-cleanup.ts, groups-file.ts): the
 * session's cgroup, its calls' process groups, and everything carrying its
 * session mark, however it detached (the kill sweep, core/sweep-script.ts).
 * `shellwright sessions --prune` runs it before it removes the dir, which
 * would take the record with it.
 */

import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { isMarkValue, SESSION_MARK, SESSION_MARK_FILE } from "../../core/call-marks.js";
import { killRecordedGroups } from "./groups-file.js";
import { CGROUP_FILE } from "./owner-cleanup.js";
import { SANDBOX_DIR_PREFIX } from "./paths.js";
import { findBash } from "./paths.js";
import { runSweep } from "./process-sweep.js";
import { SessionCgroup } from "./session-cgroup.js";

/** `owner`: the dead owner's PID (the cgroup's name must carry it); undefined for a dir without a cgroup of its own. */
export async function endLeftoverJobs(dir: string, owner?: number): Promise<void> {
  const cgroupPath = readLine(join(dir, CGROUP_FILE));
  const cgroup = owner === undefined || cgroupPath === undefined ? undefined : SessionCgroup.leftBy(owner, cgroupPath);
  // The cgroup first: one write ends everything in it, an emptied environment included.
  if (cgroup !== undefined) await cgroup.killAll();
  if (!basename(dir).startsWith(SANDBOX_DIR_PREFIX)) killRecordedGroups(dir);
  const mark = readLine(join(dir, SESSION_MARK_FILE));
  if (mark !== undefined && isMarkValue(mark)) {
    let bash: string;
    try {
      bash = findBash();
    } catch {
      bash = "";
    }
    if (bash !== "") await runSweep(bash, { marks: [`${SESSION_MARK}=${mark}`] }, "KILL", 0);
  }
  cgroup?.remove();
}

function readLine(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8").split("\n")[0]?.trim() || undefined;
  } catch {
    return undefined;
  }
}
