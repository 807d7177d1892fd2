/**
 * Entering the session's directory and recording the one a call ends in: bash
 * lines shared by the plain path's inner shell and the fast path's job.
 *
 * A directory whose path is longer than PATH_MAX (4096 bytes on Linux) is a
 * directory like any other to a terminal: `cd` reaches it step by step,
 * relative to a shorter ancestor, and getcwd() still names it. Only a path
 * handed to the kernel whole fails (ENAMETOOLONG): `cd /that/path`,
 * `[[ -d $PWD ]]`. So the session keeps such a cwd, and the next call enters
 * it in steps of whole components.
 */

import { quoteCwd } from "./quote.js";

/** Characters per step: at most 4 bytes each in UTF-8, so a step stays under PATH_MAX in any locale. */
const STEP_CHARS = 1000;

/**
 * True when $PWD, just set by `cd -P .`, names a directory that exists. `-d`
 * fails for a path longer than PATH_MAX, which `cd -P .` resolved all the
 * same; in a deleted directory getcwd() fails and bash leaves `/.` at the end
 * of PWD, which a resolved path never has.
 */
export const PWD_EXISTS = `{ [[ -d $PWD ]] || [[ $PWD != */. && \${#PWD} -ge ${STEP_CHARS} ]]; }`;

/**
 * The cwd the state records: the one the call moved to, else the session's
 * own. A read-only PWD makes `cd` fail: bash's own PWD is then the best there
 * is (the snapshot does not keep it read-only).
 */
export const NEXT_CWD =
  '{ builtin cd -P . 2>/dev/null || [[ ${PWD@a} == *r* ]]; } && [[ $PWD != "$__sw_start" ]] && ' +
  `${PWD_EXISTS} && __sw_next=$PWD || __sw_next=$__sw_scwd`;

/**
 * Enters `$__sw_scwd` one step of whole components at a time (`./a/b`, no
 * CDPATH), when it is too long to enter at once. `__sw_r` is empty when it
 * got there; otherwise the caller falls back.
 */
const ENTER_IN_STEPS =
  `__sw_r=/; [[ $__sw_scwd == /* ]] && ((\${#__sw_scwd} > ${STEP_CHARS})) && builtin cd -P / 2>/dev/null && { __sw_r=\${__sw_scwd#/}; ` +
  `while [[ -n $__sw_r ]]; do __sw_p=\${__sw_r:0:${STEP_CHARS}}; ((\${#__sw_r} <= ${STEP_CHARS})) || __sw_p=\${__sw_p%/*}; ` +
  '[[ -n $__sw_p ]] && builtin cd -P -- "./$__sw_p" 2>/dev/null || { __sw_r=/; break; }; __sw_r=${__sw_r:${#__sw_p}}; __sw_r=${__sw_r#/}; done; }';

/** Where a call runs: its own cwd, or (`sessionCwd`) the session's. */
export interface CwdPlan {
  cwd: string;
  sessionCwd?: boolean | undefined;
}

/**
 * `cd` to the command's cwd; 126 when it cannot be entered. When the session's
 * own directory was deleted (by this agent or anyone), it would otherwise be
 * 126 forever, even for `cd /tmp`: the command then runs in the nearest
 * ancestor that exists, says so, and the session moves there. Each line is a
 * whole command or ends in `then`/`else` (oneLine joins them).
 */
export function enterCwd(plan: CwdPlan): string[] {
  if (!plan.sessionCwd) return [`builtin cd -P -- ${quoteCwd(plan.cwd)} || builtin exit 126`, "__sw_start=$PWD"];
  return [
    'if builtin cd -P -- "$__sw_scwd" 2>/dev/null; then __sw_start=$PWD; else',
    ENTER_IN_STEPS,
    "if [[ -z $__sw_r ]]; then __sw_start=$PWD; else",
    "  __sw_d=$__sw_scwd; [[ $__sw_d == /* ]] || builtin exit 126",
    '  until builtin cd -P -- "${__sw_d:-/}" 2>/dev/null; do [[ -z $__sw_d ]] && builtin exit 126; __sw_d=${__sw_d%/*}; done',
    `  builtin echo "shellwright: the session's directory $__sw_scwd no longer exists; running in $PWD" >&2`,
    "  __sw_start=",
    "fi",
    "fi",
  ];
}
