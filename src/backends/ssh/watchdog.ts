/**
 * What the owner watchdog (shared/owner-watchdog.ts) does for an ssh session
 * whose owner died: the remote side first (through the master, which
 * outlives the owner by ControlPersist), then the master itself and the local
 * control directory. A session meant to outlive its owner (a CLI named
 * session) keeps its remote processes and directory, but its master still
 * goes: nothing would ever use it again.
 */

import { SESSION_MARK } from "../../core/call-marks.js";
import { shellQuote } from "../../core/script.js";
import { sweepScript } from "../../core/sweep-script.js";
import { OwnerWatchdog } from "../shared/owner-watchdog.js";
import { writeOwner } from "../shared/owner.js";
import { controlArgs, sshArgs, type SshTarget } from "./command.js";
import { writeRemoteRecord } from "./remote-record.js";

export interface SshCleanup {
  sshPath: string;
  target: SshTarget;
  /** The local directory holding the master's socket. */
  controlDir: string;
  /**
   * Also end the remote side: the groups the watchdog passes as "$@", every
   * process carrying the session's mark (a bash sweep, see
   * core/sweep-script.ts) and this directory.
   */
  remote?: { dir: string | undefined; sweep?: string | undefined } | undefined;
}

/**
 * The remote half, with `@GROUPS@` standing for the watchdog's arguments:
 * `aPGID` for a call still running (its outer shell leads the group) and
 * `fPGID` for a finished one, killed only while its leader's PID is unused
 * (PIDs wrap, and a reused one may lead an unrelated session).
 */
export function remoteCleanupScript(dir: string | undefined, sweep?: string): string {
  return [
    // What left the groups (setsid, double fork) still carries the session's mark.
    sweep === undefined ? "" : `bash -c ${shellQuote(sweep)} >/dev/null 2>&1`,
    `live=" "; for f in /proc/[0-9]*/stat; do read -r s < "$f" 2>/dev/null || continue; s=\${s##*) }; set -- $s; [ "$3" = "$4" ] && live="$live$3 "; done`,
    `for g in @GROUPS@; do case $g in a*) kill -s KILL -- "-\${g#a}" 2>/dev/null;; f*) g=\${g#f}; [ -e /proc/$g ] && continue; case "$live" in *" $g "*) kill -s KILL -- "-$g" 2>/dev/null;; esac;; esac; done`,
    dir === undefined ? "" : `rm -rf -- ${shellQuote(dir)}`,
    "true",
  ]
    .filter(Boolean)
    .join("\n");
}

/** The watchdog's local bash cleanup. */
export function sshWatchdogCleanup(options: SshCleanup): string {
  const ssh = shellQuote(options.sshPath);
  const words = (args: string[]) => args.map(shellQuote).join(" ");
  // A host that stopped answering must not keep the watchdog forever.
  const lines: string[] = ['t=; command -v timeout >/dev/null 2>&1 && t="timeout 30"'];
  if (options.remote !== undefined) {
    lines.push(
      `remote=${shellQuote(remoteCleanupScript(options.remote.dir, options.remote.sweep))}`,
      "remote=${remote//@GROUPS@/$*}",
      // sshArgs takes the remote command last: the placeholder is replaced by "$remote".
      `$t ${ssh} ${words(sshArgs(options.target, "@").slice(0, -1))} "$remote" </dev/null >/dev/null 2>&1`,
    );
  }
  lines.push(
    `$t ${ssh} ${words(controlArgs(options.target, "exit"))} </dev/null >/dev/null 2>&1`,
    `rm -rf -- ${shellQuote(options.controlDir)}`,
  );
  return lines.join("\n");
}

export interface SshOwnerGuard {
  sshPath: string;
  target: SshTarget;
  controlDir: string;
  /** What to end on the host when the owner dies; undefined for a session meant to outlive its owner. */
  remote?: { dir: string | undefined; mark: string; groupsFile: string } | undefined;
}

/**
 * Starts the watchdog, and records in the control dir what it would clean on the host, for `shellwright sessions
 * --prune` when the watchdog dies with its owner (remote-record.ts). The owner file comes last: it makes the dir a
 * candidate for `--prune`, which must then find the record.
 */
export function guardSshOwnerDeath(o: SshOwnerGuard): OwnerWatchdog {
  const remote = o.remote;
  if (remote !== undefined) {
    writeRemoteRecord(o.controlDir, { sshPath: o.sshPath, target: { ...o.target, controlPath: undefined }, ...remote });
  }
  writeOwner(o.controlDir);
  return new OwnerWatchdog({
    cleanup: sshWatchdogCleanup({
      sshPath: o.sshPath,
      target: o.target,
      controlDir: o.controlDir,
      remote: remote && {
        dir: remote.dir,
        sweep: sweepScript({ marks: [`${SESSION_MARK}=${remote.mark}`] }, "KILL", 0),
      },
    }),
  });
}
