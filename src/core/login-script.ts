/**
 * The bash side of login snapshot reuse (login-snapshots.ts): the init's
 * outer shell prints a fingerprint of the login profile's files and, when
 * Node hands it a capture taken under the same fingerprint, writes that
 * capture as the session's snapshot instead of running `bash -l`. And the
 * script that reads a fresh snapshot back for capture. Pure builders.
 */

import { shellQuote } from "./quote.js";
import { reportPidLines } from "./wrapper-pid.js";

/**
 * The files a login bash reads, and what they usually source. A change to
 * one (its size, mtime or inode; one created or removed) makes the next
 * session run the login again.
 */
const PROFILE_FILES = [
  "/etc/profile",
  "/etc/bash.bashrc",
  "/etc/profile.d",
  "/etc/profile.d/*",
  "~/.bash_profile",
  "~/.bash_login",
  "~/.profile",
  "~/.bashrc",
  "~/.bash_aliases",
];

/** The line the init's outer shell prints first: the prefix is keyed by the call's secret. */
export const fingerprintLine = (secret: string): string => `__SHELLWRIGHT_LOGIN_${secret}__`;

/**
 * Takes the fingerprint line off the front of an init's output; the
 * fingerprint is undefined when there is none or `stat` did not run (it
 * ends with `ok` only when it did).
 */
export function takeFingerprint(text: string, secret: string): { text: string; fingerprint: string | undefined } {
  const prefix = fingerprintLine(secret);
  if (!text.startsWith(prefix)) return { text, fingerprint: undefined };
  const end = text.indexOf("\n");
  const fingerprint = text.slice(prefix.length, end < 0 ? undefined : end);
  const rest = end < 0 ? "" : text.slice(end + 1);
  return { text: rest, fingerprint: fingerprint.endsWith("ok") ? fingerprint : undefined };
}

export interface LoginReuse {
  /** The pending dump file and the session's snapshot (where the capture goes). */
  pending: string;
  snapshot: string;
  /** The script renames (remote backends); else Node does, after the end marker. */
  renameInScript: boolean;
  /** The fingerprint of the capture Node sends on stdin after the secret; none: only print it. */
  expected?: string | undefined;
}

/**
 * Lines for the init's outer shell, after it read the secret and the
 * caller's umask: print the fingerprint; when it is the expected one, write
 * stdin (the capture) as the pending dump, commit it and end the call. A
 * write that fails goes on with the login, as if nothing was captured.
 */
export function loginReuseLines(reuse: LoginReuse): string[] {
  const files = PROFILE_FILES.map((f) => (f.startsWith("~/") ? `~/${shellQuote(f.slice(2))}` : f)).join(" ");
  const lines = [
    // A missing file is a line missing: `ok` says stat itself ran.
    `__sw_fp=; command -p -v stat >/dev/null 2>&1 && __sw_fp=$(command -p stat -L -c '%n %s %y %i' -- ${files} 2>/dev/null; builtin echo ok)`,
    `__sw_fp="$EUID $HOME $BASH_VERSION \${__sw_fp//$'\\n'/|}"`,
    `builtin printf '${fingerprintLine("%s")}%s\\n' "$__sw_key" "$__sw_fp"`,
  ];
  if (reuse.expected === undefined) return lines;
  const pending = shellQuote(reuse.pending);
  const commit = reuse.renameInScript
    ? `command -p mv -f -- ${pending} ${shellQuote(reuse.snapshot)} && __sw_out=C$EPOCHREALTIME:$__sw_c`
    : "__sw_out=C:$__sw_c";
  return [
    ...lines,
    `if [[ $__sw_fp == ${shellQuote(reuse.expected)} ]]; then`,
    // cat, not $(</dev/stdin): a socket's /proc link cannot be opened. $(…) drops the snapshot's last newline.
    "  __sw_snap=$(command -p cat); __sw_h=${__sw_snap%%$'\\n'*}",
    // Only a whole snapshot (its header names the cwd, encoded as the epilogue
    // does) whose cwd can still be entered is taken; anything else runs the
    // login, which says why a cwd cannot be entered.
    "  __sw_c=; [[ $__sw_h =~ ^#[0-9]+\\ (.+)$ ]] && __sw_c=${BASH_REMATCH[1]} && __sw_d=${__sw_c//%0A/$'\\n'} && __sw_d=${__sw_d//%25/%}",
    "  if [[ -n $__sw_c && -d $__sw_d && -x $__sw_d ]]; then",
    "    __sw_out=N; builtin umask 077",
    `    if builtin printf '%s\\n' "$__sw_snap" >| ${pending} 2>/dev/null; then`,
    `      ${commit}`,
    '      builtin printf \'__SHELLWRIGHT_END_%s__%s__SHELLWRIGHT_END_%s__\\n\' "$__sw_key" "$__sw_out" "$__sw_key"; builtin exit 0',
    "    fi",
    "  fi",
    "fi",
  ];
}

/**
 * A call that prints the session's snapshot as one line of base64 (byte-exact
 * through the output), then the end marker (committed, `C:`, when it could), for the
 * capture of a snapshot a login just dumped.
 */
export function buildSnapshotReadScript(plan: { sessionId: string; snapshot: string; reportPid: boolean }): string {
  return [
    "exec 2>&1",
    ...(plan.reportPid ? reportPidLines(plan.sessionId) : []),
    "IFS= builtin read -r __sw_key || builtin exit 125",
    "__sw_out=N",
    `command -p base64 -w 0 -- ${shellQuote(plan.snapshot)} 2>/dev/null && __sw_out=C:`,
    'builtin printf \'\\n__SHELLWRIGHT_END_%s__%s__SHELLWRIGHT_END_%s__\\n\' "$__sw_key" "$__sw_out" "$__sw_key"',
  ].join("\n");
}
