/**
 * The command `shellwright shell` runs under a pseudo-terminal: an
 * interactive bash with the session's state. A PTY process starts from the
 * session's cwd and exported variables; an interactive bash reads its own rc
 * files, so the session's functions, aliases and options would be lost in
 * it. Its rc file therefore reads what a terminal's bash reads (the system's
 * and the user's bashrc: the prompt, completion) and then the session's
 * snapshot over it. The editor stand-ins the session sets for an agent
 * (core/editor-defaults.ts) are dropped: a person is at the keyboard.
 */

import { ADVICE_VARIABLE, EDITOR_STAND_IN, EDITOR_VARIABLES } from "../core/editor-defaults.js";
import { shellQuote } from "../core/script.js";

const RC = [
  "[[ -f /etc/bash.bashrc ]] && builtin source /etc/bash.bashrc",
  "[[ -f ~/.bashrc ]] && builtin source ~/.bashrc",
  // The snapshot's TERM is the backend's; this one is the emulator's, which the launch set.
  "__sw_term=$TERM",
  '[[ -n $__sw_snapshot ]] && builtin source "$__sw_snapshot" >/dev/null 2>&1',
  'builtin export TERM="$__sw_term"',
  `for __sw_v in ${EDITOR_VARIABLES.join(" ")}; do [[ \${!__sw_v-} == ${shellQuote(EDITOR_STAND_IN)} ]] && builtin unset -v "$__sw_v"; done`,
  `builtin unset -v __sw_v __sw_term __sw_snapshot __sw_scwd ${ADVICE_VARIABLE}`,
].join("\n");

/**
 * Run where a PTY process's command runs: `$1` is the session's snapshot
 * (empty without one), and the cwd is already the session's.
 */
export const INTERACTIVE_SHELL = `__sw_snapshot=$1 builtin exec bash --rcfile <(builtin printf '%s\\n' ${shellQuote(RC)}) -i`;
