/**
 * What an ssh session's control dir records so that `shellwright sessions
 * --prune` can end the session's remote side when its owner and the owner's
 * watchdog both died (the watchdog, ssh/watchdog.ts, would have done it): how
 * to reach the host (the target, through the master while it still runs),
 * the session's mark, its groups file and the remote dir it made. A private
 * file (0600) in the private control dir (0700); it holds paths and options,
 * never a key or a password.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isMarkValue, SESSION_MARK } from "../../core/call-marks.js";
import { shellQuote } from "../../core/script.js";
import { sweepScript } from "../../core/sweep-script.js";
import type { SshTarget } from "./command.js";

export const REMOTE_RECORD_FILE = "remote.json";

export interface RemoteRecord {
  sshPath: string;
  /** Its control path is not kept: the master's socket is `master` in the dir that holds this record. */
  target: Omit<SshTarget, "controlPath"> & { controlPath?: undefined };
  mark: string;
  /** The session's groups file on the host (every call appends its group). */
  groupsFile: string;
  /** The remote dir, when the session made it (and so removes it). */
  dir?: string | undefined;
}

export function writeRemoteRecord(controlDir: string, record: RemoteRecord): void {
  writeFileSync(join(controlDir, REMOTE_RECORD_FILE), JSON.stringify(record), { mode: 0o600 });
}

/** The record, when there is a well-formed one. */
export function readRemoteRecord(controlDir: string): RemoteRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(join(controlDir, REMOTE_RECORD_FILE), "utf8")) as RemoteRecord;
    const absolute = (path: unknown) => typeof path === "string" && path.startsWith("/");
    if (typeof record.sshPath !== "string" || typeof record.target?.host !== "string") return undefined;
    if (!isMarkValue(record.mark) || !absolute(record.groupsFile)) return undefined;
    if (record.dir !== undefined && !absolute(record.dir)) return undefined;
    return record;
  } catch {
    return undefined;
  }
}

/** Bash that sets $live to every `GROUP:SESSION` pair some process on the host is in. */
export const LIVE_GROUPS_LINE = `live=" "; for f in /proc/[0-9]*/stat; do read -r s < "$f" 2>/dev/null || continue; s=\${s##*) }; set -- $s; live="$live$3:$4 "; done`;

/**
 * Bash (after LIVE_GROUPS_LINE) that kills each group of a groups file (`GROUP:SESSION`, or `GROUP` for one that
 * leads its session) only while that pair still has a process and its leader's PID is unused: PIDs wrap, and a
 * reused one may lead an unrelated session. Then the file goes.
 */
export function killGroupsFileLine(groupsFile: string): string {
  const file = shellQuote(groupsFile);
  return `if [ -f ${file} ]; then for e in $(cat ${file}); do g=\${e%%:*}; case $e in *:*) ;; *) e=$g:$g;; esac; [ -e /proc/$g ] && continue; case "$live" in *" $e "*) kill -s KILL -- -$g 2>/dev/null;; esac; done; rm -f ${file}; fi`;
}

/**
 * What `--prune` runs on the host (with bash): everything with the session's mark, then each recorded group: one
 * whose leader is gone while that pair still has a process (as at close), or one whose leader still runs and is
 * the session's (a call's outer shell, which carries the mark on its command line, not in its environment).
 */
export function remotePruneScript(record: RemoteRecord): string {
  const mark = `${SESSION_MARK}=${record.mark}`;
  const file = shellQuote(record.groupsFile);
  return [
    `bash -c ${shellQuote(sweepScript({ marks: [mark] }, "KILL", 0))} >/dev/null 2>&1`,
    LIVE_GROUPS_LINE,
    `if [[ -f ${file} ]]; then for e in $(< ${file}); do g=\${e%%:*}; [[ $e == *:* ]] || e=$g:$g`,
    `  if [[ -e /proc/$g ]]; then mapfile -d '' -t a < /proc/$g/cmdline 2>/dev/null; [[ " \${a[*]} " == *${shellQuote(mark)}* ]] || continue`,
    `  else [[ $live == *" $e "* ]] || continue; fi`,
    `  kill -s KILL -- -$g 2>/dev/null`,
    `done; rm -f ${file}; fi`,
    record.dir === undefined ? "" : `rm -rf -- ${shellQuote(record.dir)}`,
    "true",
  ]
    .filter(Boolean)
    .join("\n");
}
