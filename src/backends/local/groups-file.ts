/**
 * The process groups of a local session whose state dir outlives the process
 * (a CLI named session): each `shellwright exec` is a new process whose
 * transport knows only its own calls, so the groups are appended to a file in
 * the state dir and `shellwright close NAME` kills them all.
 *
 * Each line is `PGID STARTTIME` (the leader's start time from /proc, in clock
 * ticks since boot). Linux never hands out a PID while a group of that id has
 * members, so a group whose leader is gone is still ours; a leader PID that
 * exists with another start time was reused, and its group is left alone.
 *
 * A process that leaves its group (`setsid cmd &`) is found by the session
 * mark in its environment instead: the dir keeps one mark for every process
 * of the session (sharedSessionMark), which close's sweep looks for.
 */

import { appendFileSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isMarkValue, SESSION_MARK_FILE } from "../../core/call-marks.js";

export const GROUPS_FILE = "groups";

export function recordGroup(dir: string, pgid: number): void {
  try {
    appendFileSync(join(dir, GROUPS_FILE), `${pgid} ${startTime(pgid) ?? 0}\n`, { mode: 0o600 });
  } catch {
    // the dir is gone: nothing is left to close later
  }
}

/** Kills every recorded group that is still ours, then forgets them all. */
export function killRecordedGroups(dir: string): void {
  const file = join(dir, GROUPS_FILE);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return;
  }
  for (const line of text.split("\n")) {
    const [pgid, started] = line.split(" ").map(Number);
    if (pgid === undefined || !Number.isInteger(pgid) || pgid <= 1) continue;
    const now = startTime(pgid);
    if (now !== undefined && now !== started) continue; // the PID leads someone else now
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // the group is empty
    }
  }
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/** Field 22 of /proc/PID/stat, or undefined when the process is gone (or there is no /proc). */
export function startTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const value = Number(fields[19]);
    return Number.isInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The session mark every process of this state dir's session shares (call-marks.ts): the first one to get here
 * writes `fresh`, the others read it. Undefined when the dir cannot hold it (the caller keeps its own mark).
 */
export function sharedSessionMark(dir: string, fresh: string): string | undefined {
  const file = join(dir, SESSION_MARK_FILE);
  try {
    writeFileSync(file, `${fresh}\n`, { flag: "wx", mode: 0o600 });
    return fresh;
  } catch {
    try {
      const kept = readFileSync(file, "utf8").trim();
      return isMarkValue(kept) ? kept : undefined;
    } catch {
      return undefined;
    }
  }
}
