/**
 * Pure builders for the bash a pseudo-terminal process needs (see
 * process-scripts.ts for the process directory; a PTY process adds `ctl`, a
 * FIFO the helper reads resize requests from).
 */

import { shellQuote } from "../../core/script.js";

export interface PtyLaunch {
  /** The helper's path inside the backend (pty-helper.ts). */
  helper: string;
  cols: number;
  rows: number;
  /** How long the helper gives the program's session between TERM and KILL. */
  graceMs: number;
  /** The session snapshot to source, or undefined when there is none (init failed). */
  snapshot: string | undefined;
  /** The resize FIFO; undefined in the foreground, where nothing can resize. */
  ctl: string | undefined;
}

/** The emulator on Node's side is an xterm: programs should speak xterm to it. */
const TERM_TYPE = "xterm-256color";

/**
 * The command line that runs `command` under a PTY. The program is a new
 * `bash -c` (the helper execs it in the PTY's session), so it sources the
 * snapshot again for the session's functions and aliases, and enters the
 * directory the launch ran in ($PWD, expanded by the launching shell).
 */
export function ptyCommandLine(pty: PtyLaunch, command: string): string {
  const inner = [
    pty.snapshot === undefined ? "" : 'builtin source "$1" >/dev/null 2>&1;',
    'builtin cd -- "$2" || builtin exit 126;',
    `builtin export TERM=${TERM_TYPE};`,
    "builtin unset COLUMNS LINES;",
    'builtin eval -- "$3"',
  ].join(" ");
  const flags = [pty.ctl === undefined ? "" : `-c ${shellQuote(pty.ctl)}`, `-g ${Math.max(0, Math.floor(pty.graceMs))}`]
    .filter((flag) => flag !== "")
    .join(" ");
  return `${shellQuote(pty.helper)} -p ${flags} ${pty.cols} ${pty.rows} -- bash -c ${shellQuote(inner)} bash ${shellQuote(pty.snapshot ?? "")} "$PWD" ${shellQuote(command)}`;
}

/** One resize request to the helper's control FIFO (opened read-write by it, so this never blocks). */
export function resizeScript(ctl: string, cols: number, rows: number): string {
  const q = shellQuote(ctl);
  return `[[ -p ${q} ]] || { builtin echo 'no terminal'; builtin exit 3; }\nbuiltin printf '%d %d\\n' ${cols} ${rows} > ${q}`;
}
