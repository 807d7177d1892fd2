/**
 * The bash side of the session fast path (docs/fast-path.md): the launcher
 * that holds the session state and forks one job per call, and the script
 * each job sources. They are one contract (the job reads the launcher's
 * `__swl_d`, `__swl_id` and `__sw_al`; the launcher's own names are not
 * `__sw_*`, which every snapshot unsets), so they live together, next to
 * script.ts whose pieces they share. Pure builders, no I/O.
 *
 * The job does what the plain path's inner shell does after sourcing the
 * snapshot: enter the cwd, set the epilogue, `eval` the command. Its
 * epilogue writes the same dump, with two differences the helper needs: no
 * wrapper variable (`__sw_*`) is in it, so a call that changed nothing
 * dumps exactly the committed state (the helper compares bytes to decide
 * whether to commit); and it ends with `#OK <cwd>`, the sign the dump is
 * complete. The job's waiter appends `#END <status>`.
 */

import { CALL_MARK, SESSION_MARK } from "./call-marks.js";
import { pureCommandWords } from "./pure-command.js";
import { enterCwd, NEXT_CWD, quoteCwd, shellQuote, TRAP_FUNCTION, UNSHADOW, type CommandPlan } from "./script.js";
import { CAPTURE_UMASK_LINE, stateDumpLines } from "./state-dump.js";

/**
 * The launcher: `bash -c LAUNCHER bash DIR`, stdin the helper's control pipe
 * (`C ID HASSTDIN` lines), stdout its report pipe (`H`, `S ID PID`). One
 * compound command, parsed before the snapshot defines any alias or
 * function; every command word is a keyword or `builtin`. It never runs
 * user code: each call runs in a background job, a process-group leader
 * (`set -m`) that turns job control off again so the user's own jobs stay
 * in its group. The job is a waiter around a subshell: the waiter learns
 * the exit status even when the command `exec`s, and appends it.
 */
export function buildLauncherScript(): string {
  return [
    "{",
    '__swl_d=$1; builtin set --; builtin source "$__swl_d/base.sh" >/dev/null 2>&1',
    `${UNSHADOW}; __sw_al=; [[ :$BASHOPTS: != *:expand_aliases:* ]] || __sw_al=1; builtin shopt -u expand_aliases`,
    "builtin set -m +e +u +x +v",
    "builtin printf 'H\\n'",
    // TMOUT would be read's default timeout.
    "while TMOUT= IFS=' ' builtin read -r __swl_t __swl_id __swl_a; do",
    "  [[ $__swl_t == C ]] || continue",
    "  __swl_in=/dev/null; [[ $__swl_a != 1 ]] || __swl_in=$__swl_d/$__swl_id.i",
    // Redirections on the subshell itself: they happen in the child (`builtin exec >x` would not stick).
    "  (",
    "    builtin set +m",
    // Read and eval'd rather than sourced: error messages then say `bash: line N:` as on the plain path.
    '    ( IFS= builtin read -r -d \'\' __swl_s <"$__swl_d/$__swl_id.c"; builtin eval "$__swl_s" )',
    '    builtin printf \'#END %s\\n\' "$?" >>"$__swl_d/$__swl_id.s"',
    '  ) <"$__swl_in" >"$__swl_d/$__swl_id.o" 2>&1 &',
    '  builtin printf \'S %s %s\\n\' "$__swl_id" "$!"',
    // The shell still reaps them; its job table does not grow with every call.
    "  builtin disown -a 2>/dev/null",
    "done",
    "}",
  ].join("\n");
}

/** What a fast call needs: a command plan without the plain path's file and stdin details. */
export type FastCallPlan = Pick<CommandPlan, "command" | "cwd" | "knownCwd" | "sessionCwd">;

/**
 * `pure`: the command may have left the state as it was (pure-command.ts). If
 * the job found none of its command words to be a function or an alias, and
 * the cwd is where it was, the job writes `#SAME <cwd>` instead of the dump:
 * the helper then commits nothing. Only such a call's epilogue has this
 * branch, so no other command can take it by setting `__sw_pure`.
 */
function fastEpilogue(pure: boolean): string {
  return [
    `{ __sw_ec=$? __sw_fl=$- __sw_bo=$BASHOPTS; ${UNSHADOW}; \\builtin set +x +v +e +u; \\builtin shopt -u expand_aliases; \\builtin unset -f trap; \\builtin unset -v __sw_epi; \\builtin trap - ERR DEBUG RETURN; } 2>/dev/null`,
    `[[ -n \${__sw_uexit-} ]] && { [[ :$__sw_bo: != *:expand_aliases:* ]] || builtin shopt -s expand_aliases; builtin eval "$__sw_uexit"; { ${UNSHADOW}; \\builtin set +x +v +e +u; \\builtin shopt -u expand_aliases; \\builtin unset -f trap; } 2>/dev/null; }`,
    NEXT_CWD,
    "__sw_h=${__sw_next//[%]/%25}; __sw_h=${__sw_h//$'\\n'/%0A}",
    ...(pure
      ? [
          `[[ -n $__sw_pure && $__sw_next == "$__sw_scwd" ]] && { builtin printf '#SAME %s\\n' "$__sw_h" >| "$__swl_d/$__swl_id.s" 2>/dev/null || builtin exit 125; builtin exit "$__sw_ec"; }`,
        ]
      : []),
    `builtin unset -v ${CALL_MARK} ${SESSION_MARK} 2>/dev/null`,
    CAPTURE_UMASK_LINE,
    // Everything the rest needs moves to the positional parameters, so no wrapper variable reaches the dump.
    'builtin set -- "$__sw_ec" "$__sw_h" "$__sw_next" "$__sw_fl" "$__sw_bo" "$__sw_um" "$__swl_d/$__swl_id.s"',
    'builtin unset -v "${!__sw_@}" "${!__swl_@}"; __sw_um=$6',
    "{ [[ :$5: != *:expand_aliases:* ]] || builtin shopt -s expand_aliases; [[ $4 != *x* ]] || builtin set -x; [[ $4 != *v* ]] || builtin set -v; " +
      stateDumpLines().join("; ") +
      `; builtin printf '__sw_scwd=%q\\n' "$3"; builtin set +x +v; builtin printf '#OK %s\\n' "$2"; } >| "$7" 2>/dev/null || builtin exit 125`,
    'builtin exit "$1"',
  ].join("\n");
}

/**
 * The script a job sources. Parsed with the user's aliases off (the
 * launcher turned them off after sourcing the snapshot); the command itself
 * runs with them as the user left them.
 */
export function buildFastCallScript(plan: FastCallPlan): string {
  const commandPlan = plan as CommandPlan;
  const words = pureCommandWords(plan.command);
  // A command word that is a function or an alias in this session may change anything.
  const pureCheck =
    words === undefined
      ? []
      : [
          `__sw_pure=1; for __sw_w in ${words.map(shellQuote).join(" ")}; do builtin declare -F -- "$__sw_w" >/dev/null || [[ -n \${BASH_ALIASES[$__sw_w]+x} ]] && __sw_pure=; done`,
        ];
  return [
    `__sw_jpid=$BASHPID __sw_scwd=${quoteCwd(plan.knownCwd ?? plan.cwd)} __sw_uexit=`,
    ...enterCwd(commandPlan),
    ...pureCheck,
    `__sw_epi=${shellQuote(fastEpilogue(words !== undefined))}; builtin trap "$__sw_epi" EXIT`,
    TRAP_FUNCTION,
    `[[ -z $__sw_al ]] || builtin shopt -s expand_aliases; builtin eval ${shellQuote(plan.command)}`,
  ].join("\n");
}
