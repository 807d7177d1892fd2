/**
 * The ssh session's first round trip (SshTransport.start): open the master,
 * check bash, make the session's private directory on the host and write the
 * env file into it from stdin; a session that outlives this process also
 * reads the session mark kept there.
 */

import { isMarkValue, SESSION_MARK_FILE } from "../../core/call-marks.js";
import { shellQuote } from "../../core/script.js";

export interface SessionDirSetup {
  script: string;
  /** The env file's text, on stdin (never on a command line); undefined when there are no variables. */
  stdin: string | undefined;
}

export function sessionDirSetup(
  env: Record<string, string>,
  remoteTempDir: string | undefined,
  /** Set for a session that outlives this process: the mark to keep on the host unless one is there. */
  sharedMark: string | undefined,
): SessionDirSetup {
  const hasEnv = Object.keys(env).length > 0;
  const dir =
    remoteTempDir === undefined
      ? 'd=$(mktemp -d "${TMPDIR:-/tmp}/shellwright-XXXXXXXX")'
      : `d=${shellQuote(remoteTempDir)} && mkdir -p -m 700 -- "$d"`;
  // A session that outlives this process shares one session mark with every process that opens it, kept on
  // the host (call-marks.ts): the first writes its own (noclobber), each prints the kept one before the dir.
  const mark =
    sharedMark === undefined
      ? ""
      : `(set -C; printf '%s\\n' ${shellQuote(sharedMark)} > "$d/${SESSION_MARK_FILE}") 2>/dev/null; head -n 1 "$d/${SESSION_MARK_FILE}"`;
  const script = [
    "command -v bash >/dev/null 2>&1 || { echo 'bash is not installed on the host' >&2; exit 127; }",
    `umask 077 && ${dir} || exit 1`,
    hasEnv ? 'cat > "$d/env" || exit 1' : "",
    mark,
    "printf '%s\\n' \"$d\"",
  ]
    .filter(Boolean)
    .join("\n");
  const stdin = Object.entries(env)
    .map(([name, value]) => `export ${name}=${shellQuote(value)}\n`)
    .join("");
  return { script, stdin: hasEnv ? stdin : undefined };
}

/** The dir the setup printed last, and the kept mark on the line before it (a profile may print lines of its own). */
export function parseSessionDir(stdout: string): { dir: string; keptMark: string | undefined } {
  const lines = stdout.trim().split("\n");
  const dir = lines.pop() ?? "";
  const kept = lines.at(-1)?.trim() ?? "";
  return { dir, keptMark: isMarkValue(kept) ? kept : undefined };
}
