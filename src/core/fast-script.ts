/**
 * The bash side of the session fast path (docs/fast-path.md): the launcher
 * that holds the session state and forks one job per call, and the script
 * each job sources. They are one contract (the job reads the launcher's
 * `__swl_d`, `__swl_id`, `__swl_epi`, `__swl_epip`, `__swl_epii` and `__sw_al`; the
 * launcher's own names are not `__sw_*`, which every snapshot unsets), so
 * they live together, next to script.ts whose pieces they share. Pure
 * builders, no I/O.
 *
 * The job does what the plain path's inner shell does after sourcing the
 * snapshot: enter the cwd, set the epilogue, `eval` the command. Its
 * epilogue writes the same dump, with two differences the helper needs: no
 * wrapper variable (`__sw_*`) is in it, so a call that changed nothing
 * dumps exactly the committed state (the helper compares bytes to decide
 * whether to commit); and it ends with `#OK <status> <cwd>`, the sign the
 * dump is complete and the status the job exits with.
 */

import { UNSET_MARKS } from "./call-marks.js";
import { pureCommandWords } from "./pure-command.js";
import {
  ENABLE_BUILTINS,
  oneLine,
  quoteCwd,
  saveFailed,
  shellQuote,
  TRAP_FUNCTION,
  UNSHADOW,
  type CommandPlan,
} from "./script.js";
import { enterCwd, NEXT_CWD, PWD_EXISTS } from "./cwd-script.js";
import { CAPTURE_UMASK_LINE, stateDumpLines } from "./state-dump.js";

/**
 * The launcher: `bash -c LAUNCHER bash DEFINITIONS DIR` (helper-argv.ts), stdin the helper's control pipe,
 * stdout its report pipe. One compound command, parsed before the snapshot
 * defines any alias or function; every command word is a keyword or
 * `builtin`. It never runs user code: each call runs in a background job, a
 * process-group leader (`set -m`) that turns job control off again so the
 * user's own jobs stay in its group.
 *
 * Requests: `C ID HASSTDIN TOKEN` starts call ID's job; the job's start
 * report carries the token, which no other job has seen (it was drawn after
 * their forks), so a command writing into the report pipe cannot claim a
 * neighbour's call. The job's dump records its
 * exit status; when there is none (the command `exec`ed a program, the job
 * was killed, the dump failed) the helper sends `W ID PID` once it saw the
 * job exit, and the launcher, its parent, answers with `wait`. `F PID...`
 * lets go of the statuses nobody asked for. Reports: `H` (ready), `S ID PID TOKEN`
 * (started: written by the job itself, first), `E ID STATUS`. One fork per
 * call: no waiter process.
 *
 * What every job needs that is the same in every call (the epilogues, the
 * `trap` function) is defined here once, after the snapshot: a job inherits
 * it with the fork instead of parsing it again.
 */
/** One call's job, without its stderr (the launcher adds it: joined to stdout, or apart). */
const JOB =
  '( builtin printf \'S %s %s %s\\n\' "$__swl_id" "$BASHPID" "$__swl_k" >&3; builtin exec 3>&-; builtin unset -v __swl_k; builtin set +m; IFS= builtin read -r -d \'\' __swl_s <&4; builtin exec 4<&-; builtin eval "$__swl_s" ) 3>&1 4<"$__swl_d/$__swl_id.c" <"$__swl_in" >"$__swl_d/$__swl_id.o"';

export function buildLauncherScript(): string {
  // One line: the job's `eval` stands on line 1 (as the call script's own
  // does), so a command's messages and $LINENO count from its first line.
  // The definitions come as $1 (jobDefinitions()): parsed when they run, after
  // the snapshot, with its aliases off (a `$'…'` literal here would cost a
  // decoding at every launcher start).
  return [
    "{",
    // The snapshot is sourced on the line that turns its aliases off: that line is parsed before it.
    '__swl_d=$2 __swl_defs=$1; builtin set --; builtin source "$__swl_d/base.sh" >/dev/null 2>&1;',
    `${UNSHADOW}; __sw_al=; [[ :$BASHOPTS: != *:expand_aliases:* ]] || __sw_al=1; builtin shopt -u expand_aliases;`,
    'builtin eval "$__swl_defs"; builtin unset -v __swl_defs;',
    "builtin set -m +e +u +x +v; builtin printf 'H\\n';",
    // TMOUT would be read's default timeout.
    "while TMOUT= IFS=' ' builtin read -r __swl_t __swl_id __swl_a __swl_k; do",
    "if [[ $__swl_t == C ]]; then",
    // __swl_a: 1 the call has stdin, 2 its stderr goes apart (a FIFO of its own, `.e`, which the helper reads).
    "__swl_in=/dev/null; [[ $__swl_a != [13] ]] || __swl_in=$__swl_d/$__swl_id.i;",
    // Redirections on the subshell itself: they happen in the child (`builtin exec >x` would not stick).
    // Read and eval'd rather than sourced: error messages then say `bash:` as on the plain path.
    // The job reports its own start before any of the command runs: a command that kills the launcher
    // at once (`kill -9` of its parent) must not leave the helper unsure whether it ran.
    // Its script (4) and stdin are open before it reports its start: the helper then unlinks both files, so what
    // they hold (a password typed for `read -s`) is on disk only until the job runs.
    // stderr apart: the job's own FIFO, opened as the others are (`builtin exec 2>` would not stick either).
    `if [[ $__swl_a == [23] ]]; then ${JOB} 2>"$__swl_d/$__swl_id.e" & else ${JOB} 2>&1 & fi;`,
    "elif [[ $__swl_t == W ]]; then",
    // The shell reaped the job when it exited and kept its status for this `wait`.
    'builtin wait "$__swl_a" 2>/dev/null; builtin printf \'E %s %s\\n\' "$__swl_id" "$?";',
    "elif [[ $__swl_t == F ]]; then",
    // PIDs only (the helper writes them); all exited, so this never blocks.
    "builtin wait $__swl_id $__swl_a $__swl_k 2>/dev/null;",
    "fi;",
    "done;",
    "}",
  ].join(" ");
}

/**
 * What the launcher defines once for every job (after the snapshot, so it
 * wins): the two epilogues and the `trap` function. Exported for tests that
 * run a job in a bare bash.
 */
export function jobDefinitions(): string {
  return [
    `__swl_epi=${shellQuote(fastEpilogue(false))}`,
    `__swl_epip=${shellQuote(fastEpilogue(true))}`,
    `__swl_epii=${shellQuote(isolatedEpilogue())}`,
    TRAP_FUNCTION,
  ].join("\n");
}

/**
 * What a fast call needs: a command plan without the plain path's file and
 * stdin details. `isolated`: the call runs from the session's state and
 * leaves it as it was (ExecuteOptions.isolated).
 */
export type FastCallPlan = Pick<CommandPlan, "command" | "cwd" | "knownCwd" | "sessionCwd"> & { isolated?: boolean };

const CAPTURE = "__sw_ec=$? __sw_fl=$- __sw_bo=$BASHOPTS";

/**
 * `pure`: the command may have left the state as it was (pure-command.ts). If
 * the job found none of its command words to be a function or an alias
 * (`__sw_pure`), and the cwd is where it was, the job writes `#SAME STATUS`
 * instead of the dump: the helper then commits nothing. That check comes
 * first, so such a call's exit parses two short lines, not the whole
 * epilogue. Only a pure call's epilogue has this branch, so no other command
 * can take it by setting `__sw_pure`; and a pure command defines no function
 * or alias, so `builtin` is still the launcher's.
 */
/** What every epilogue runs first: the builtins it needs back on and unshadowed, the user's shell options off. */
const GUARD = `${ENABLE_BUILTINS}; ${UNSHADOW}; \\builtin set +x +v +e +u; \\builtin shopt -u expand_aliases; \\builtin unset -f trap; \\builtin unset -v __sw_epi; \\builtin trap - ERR DEBUG RETURN`;
/** The same after the user's EXIT trap ran. */
const GUARD_AFTER_TRAP = `${ENABLE_BUILTINS}; ${UNSHADOW}; \\builtin set +x +v +e +u; \\builtin shopt -u expand_aliases; \\builtin unset -f trap`;
/** The user's own EXIT trap, run as the command's shell would have. */
const USER_EXIT_TRAP = `[[ -n \${__sw_uexit-} ]] && { [[ :$__sw_bo: != *:expand_aliases:* ]] || builtin shopt -s expand_aliases; builtin eval "$__sw_uexit"; { ${GUARD_AFTER_TRAP}; } 2>/dev/null; }`;

function fastEpilogue(pure: boolean): string {
  const guard = GUARD;
  return [
    ...(pure
      ? [
          // The user's xtrace goes to /dev/null with the rest of these groups.
          `{ ${CAPTURE}; \\builtin shopt -u expand_aliases; } 2>/dev/null`,
          `{ [[ -n $__sw_pure ]] && ! { builtin cd -P . && [[ $PWD != "$__sw_start" ]] && ${PWD_EXISTS}; } && { builtin printf '#SAME %s\\n' "$__sw_ec" >| "$__swl_d/$__swl_id.s" || builtin exit 125; builtin exit "$__sw_ec"; }; } 2>/dev/null`,
          `{ ${guard}; } 2>/dev/null`,
        ]
      : [`{ ${CAPTURE}; ${guard}; } 2>/dev/null`]),
    USER_EXIT_TRAP,
    NEXT_CWD,
    "__sw_h=${__sw_next//[%]/%25}; __sw_h=${__sw_h//$'\\n'/%0A}",
    UNSET_MARKS,
    CAPTURE_UMASK_LINE,
    // Everything the rest needs moves to the positional parameters, so no wrapper variable reaches the dump.
    'builtin set -- "$__sw_ec" "$__sw_h" "$__sw_next" "$__sw_fl" "$__sw_bo" "$__sw_um" "$__swl_d/$__swl_id.s"',
    `builtin unset -v "\${!__sw_@}" "\${!__swl_@}"; __sw_um=$6; builtin trap '' XFSZ; __sw_why=open`,
    "{ __sw_why=; [[ :$5: != *:expand_aliases:* ]] || builtin shopt -s expand_aliases; [[ $4 != *x* ]] || builtin set -x; [[ $4 != *v* ]] || builtin set -v; " +
      stateDumpLines().join("; ") +
      `; builtin printf '__sw_scwd=%q\\n' "$3"; builtin set +x +v; builtin printf '#OK %s %s\\n' "$1" "$2"; } >| "$7" 2>/dev/null || ${saveFailed('"$1"', '"$7"')}`,
    'builtin exit "$1"',
  ].join("\n");
}

/**
 * An isolated call's epilogue: the user's EXIT trap runs, then `#SAME
 * STATUS` in place of a dump, so the helper commits nothing, whatever the
 * command changed. The guard comes first: the command may have defined
 * anything.
 */
function isolatedEpilogue(): string {
  return [
    `{ ${CAPTURE}; ${GUARD}; } 2>/dev/null`,
    USER_EXIT_TRAP,
    `{ builtin printf '#SAME %s\\n' "$__sw_ec" >| "$__swl_d/$__swl_id.s" || builtin exit 125; } 2>/dev/null`,
    'builtin exit "$__sw_ec"',
  ].join("\n");
}

/**
 * The script a job sources. Parsed with the user's aliases off (the
 * launcher turned them off after sourcing the snapshot); the command itself
 * runs with them as the user left them.
 */
export function buildFastCallScript(plan: FastCallPlan): string {
  const commandPlan = plan as CommandPlan;
  const words = plan.isolated === true ? undefined : pureCommandWords(plan.command);
  // A command word that is a function or an alias in this session may change anything.
  const pureCheck =
    words === undefined
      ? []
      : [
          `__sw_pure=1; for __sw_w in ${words.map(shellQuote).join(" ")}; do builtin declare -F -- "$__sw_w" >/dev/null || [[ -n \${BASH_ALIASES[$__sw_w]+x} ]] && __sw_pure=; done`,
        ];
  const setup = [
    ...enterCwd(commandPlan),
    ...pureCheck,
    // The epilogue and the `trap` function come with the launcher (parsed once per state).
    `__sw_epi=$${plan.isolated === true ? "__swl_epii" : words === undefined ? "__swl_epi" : "__swl_epip"}; builtin trap "$__sw_epi" EXIT`,
  ];
  // One line: the command's `eval` stands on line 1 (see buildLauncherScript).
  return (
    `__sw_jpid=$BASHPID __sw_scwd=${quoteCwd(plan.knownCwd ?? plan.cwd)} __sw_uexit=; ${oneLine(setup)}; ` +
    `[[ -z $__sw_al ]] || builtin shopt -s expand_aliases; builtin eval -- ${shellQuote(plan.command)}`
  );
}
