/**
 * The session state a call leaves behind, as bash lines that print a script
 * restoring it. Each call is a fresh `bash -c` with an emptied environment, so
 * whatever this dump omits is lost between calls: it is the whole definition
 * of "what persists" (docs/persistence.md lists it and says why).
 *
 * It runs in every call's EXIT trap, so it uses builtins only: no command
 * substitution, no pipe, no external process (each would cost about as much
 * as the bash start itself). Variables are printed by one `declare -p`, whose
 * output bash itself quotes, so any NUL-free value round-trips with its
 * attributes (array, associative, integer, export, read-only, nameref, ...).
 *
 * Order of the printed script, and why:
 *   1. shopt options: `extglob` must be on before a function using it is parsed.
 *   2. variables: before `set -a` comes back, which would export every one.
 *   3. functions, then 4. aliases: an alias defined first would be expanded a
 *      second time inside function bodies that `declare -f` prints expanded.
 *   5. `shopt -s expand_aliases`, `set -o` options, umask, soft ulimits
 *      (printed first, as a function called here, see stateDumpLines).
 */

/**
 * Variables bash maintains itself that describe the running shell, not the
 * session: the dump unsets them first (so `declare -p` leaves them out) because
 * restoring them would do harm: a restored RANDOM would reseed it to the same
 * sequence on every call, SECONDS would stop counting from the call's start,
 * BASH_EXECUTION_STRING would carry the previous wrapper script along,
 * COMP_WORDBREAKS only matters to interactive completion. POSIXLY_CORRECT is
 * `set -o posix` itself: restored among the variables it would turn posix mode
 * on before the functions, and posix mode refuses a name like `my-func`, fatally;
 * `set -o posix` at the end brings it back. Unsetting
 * them is safe only because the shell that runs the dump exits right after.
 *
 * Bash's read-only variables (BASHOPTS, BASH_VERSINFO, EUID, PPID, SHELLOPTS,
 * UID) cannot be unset; they are dumped and their restore fails harmlessly
 * (the snapshot is sourced with errors discarded). Others bash sets at startup
 * (BASH, HOSTNAME, IFS, OPTIND, PS4, PWD, SHLVL, ...) are restored like any
 * variable: the value is the same or is the user's own.
 */
export const UNSAVED_VARIABLES = [
  "BASHPID",
  "BASH_ALIASES",
  "BASH_ARGC",
  "BASH_ARGV",
  "BASH_ARGV0",
  "BASH_CMDS",
  "BASH_COMMAND",
  "BASH_EXECUTION_STRING",
  "BASH_LINENO",
  "BASH_MONOSECONDS",
  "BASH_REMATCH",
  "BASH_SOURCE",
  "BASH_SUBSHELL",
  "BASH_TRAPSIG",
  "COMP_WORDBREAKS",
  "DIRSTACK",
  "EPOCHREALTIME",
  "EPOCHSECONDS",
  "FUNCNAME",
  "GROUPS",
  "HISTCMD",
  "LINENO",
  "POSIXLY_CORRECT",
  "RANDOM",
  "SECONDS",
  "SRANDOM",
] as const;

/**
 * `set -o` options that persist. Left out on purpose: errexit and nounset
 * (each call starts without them, like the traps), xtrace and verbose (they
 * would print the wrapper's own lines into the output), onecmd and noexec
 * (they would stop the wrapper), monitor (job control would move the user's
 * jobs out of the call's process group, out of reach of a timeout), and
 * history, emacs, vi, privileged (interactive or setuid only).
 */
export const SAVED_SET_OPTIONS = [
  "allexport",
  "braceexpand",
  "errtrace",
  "functrace",
  "hashall",
  "histexpand",
  "ignoreeof",
  "interactive-comments",
  "keyword",
  "noclobber",
  "noglob",
  "nolog",
  "notify",
  "physical",
  "pipefail",
  "posix",
] as const;

/**
 * Soft limits that persist (`ulimit -S -X`). Hard limits are never written:
 * a lowered hard limit cannot be raised again without privilege. A flag this
 * platform's bash lacks prints an empty line in the dump and nothing happens.
 */
const SAVED_SOFT_LIMITS = ["c", "d", "e", "f", "i", "l", "m", "n", "q", "r", "s", "t", "u", "v", "x"];

/**
 * Must run before the wrapper changes the umask for its own files: it records
 * the user's umask in `__sw_um` without a process (`umask` can only print),
 * whatever IFS the user left.
 * Linux only (/proc/self/status has `Umask:` since 4.7); elsewhere the umask
 * is not kept.
 */
export const CAPTURE_UMASK_LINE =
  "__sw_um=; { while builtin read -r __sw_k; do [[ $__sw_k == Umask:* ]] && { __sw_um=${__sw_k##*[!0-7]}; break; }; done; } 2>/dev/null </proc/self/status";

/**
 * Names the snapshot never keeps read-only, or never keeps at all: the call's
 * kill marks and the wrapper's own variables (a restored mark would tag later
 * calls with a stale one, and a read-only one would make every later call
 * print `readonly variable`), and PWD, OLDPWD and IFS, which the wrapper
 * itself assigns (a read-only PWD makes every later `cd` fail, so every call
 * would exit 126). `readonly` or `declare -n` on them lasts for the call that
 * ran it (a restored nameref mark would export the mark under another name).
 */
const RESERVED_NAMES = 'PWD OLDPWD IFS "${!SHELLWRIGHT_@}" "${!__SHELLWRIGHT@}" "${!__sw_@}" "${!__swl_@}"';

/** Every variable name, one `${!X@}` per possible first character (no process, unlike `compgen -v`). */
const ALL_NAMES = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"].map((c) => `"\${!${c}@}"`).join(" ");

/**
 * The variables. One `declare -p` for all of them when no reserved name is
 * read-only or a nameref (every call but one that ran `readonly` or
 * `declare -n` on them: `unset -v` of a nameref unsets its target); otherwise one
 * `declare -p` per name, leaving the reserved ones out, and PWD's neighbours
 * OLDPWD and IFS in without their read-only attribute.
 */
function variableLines(): string[] {
  return [
    `__sw_ro=; for __sw_k in ${RESERVED_NAMES}; do [[ ! -R $__sw_k && \${!__sw_k@a} != *r* ]] || { __sw_ro=1; break; }; done`,
    "if [[ -z $__sw_ro ]]; then builtin declare -p; else " +
      `for __sw_k in ${ALL_NAMES}; do case $__sw_k in PWD|SHELLWRIGHT_*|__SHELLWRIGHT*|__sw_*|__swl_*) ;; ` +
      "OLDPWD|IFS) if [[ ${!__sw_k@a} == *r* ]]; then __sw_a=${!__sw_k@a}; __sw_a=${__sw_a//r/}; " +
      'builtin printf \'builtin declare %s %s=%q\\n\' "${__sw_a:+-$__sw_a}" "$__sw_k" "${!__sw_k}"; ' +
      'else builtin declare -p -- "$__sw_k"; fi;; *) builtin declare -p -- "$__sw_k";; esac; done; fi',
  ];
}

export interface StateDumpOptions {
  /**
   * Name of a bash array holding the functions to save; default: all of them.
   * (The first snapshot leaves out a login profile's completion helpers.)
   */
  functionsArray?: string;
}

/**
 * Bash lines that print to stdout a script restoring the current shell state
 * (see the file header). Run them with stdout redirected to the snapshot,
 * after CAPTURE_UMASK_LINE. They change shell options of the shell that runs
 * them, so run them only where the shell exits afterwards (the EXIT trap).
 */
export function stateDumpLines(options: StateDumpOptions = {}): string[] {
  const functions =
    options.functionsArray === undefined
      ? "builtin declare -f"
      : `((\${#${options.functionsArray}[@]})) && builtin declare -f -- "\${${options.functionsArray}[@]}"`;
  return [
    // The soft limits first, while every limit is still the user's, as a
    // function the restore calls last (a restored `-n` or `-v` would break the
    // rest of it). They are read in the user's posix mode, the one they are
    // restored in (`-f` and `-c` count 512-byte blocks there, 1024 elsewhere).
    "builtin printf '__sw_lim() {\\n'",
    `for __sw_k in ${SAVED_SOFT_LIMITS.join(" ")}; do builtin printf 'builtin ulimit -S -%s ' "$__sw_k"; builtin ulimit -S "-$__sw_k" || builtin echo; done`,
    // Then a file size limit cannot cut the rest short: raised as far as it
    // goes (the shell exits after the dump). A limit too small even for these
    // lines has made every write so far fail, this one too: nothing more is
    // written (SAVE_FAILED says why).
    "builtin printf '}\\n' || __sw_why=limit",
    "[[ -z ${__sw_why-} ]] && { builtin ulimit -f unlimited 2>/dev/null || builtin ulimit -S -f hard; }",
    // The user's shopt state, before this dump changes two of them for its own matching.
    "builtin shopt -p",
    // Restoring the compatNN options sets BASH_COMPAT; the variables below bring it back if it was set.
    "builtin printf 'builtin unset -v BASH_COMPAT\\n'",
    "builtin set +e +u; builtin shopt -u nocasematch",
    // Read before POSIXLY_CORRECT is unset, which turns posix mode off.
    `__sw_o=; for __sw_k in ${SAVED_SET_OPTIONS.join(" ")}; do [[ :$SHELLOPTS: == *:$__sw_k:* ]] && __sw_o+=" -o $__sw_k" || __sw_o+=" +o $__sw_k"; done`,
    `builtin unset -v ${UNSAVED_VARIABLES.join(" ")}`,
    // One `declare -p` for all variables is far cheaper than listing names
    // (each "${!a@}" walks every variable). The wrapper's own variables go out
    // with it and are unset again at restore; `_` and PIPESTATUS reappear
    // after every command and are overwritten at once where restored.
    ...variableLines(),
    'builtin printf \'builtin unset -v -- %s\\n\' "${!__sw_@}" "${!__SHELLWRIGHT@}"',
    functions,
    "builtin declare -Fx",
    "builtin alias -p",
    "builtin printf 'builtin shopt -s expand_aliases\\nbuiltin set%s\\n' \"$__sw_o\"",
    "[[ -n $__sw_um ]] && builtin printf 'builtin umask %s\\n' \"$__sw_um\"",
    "builtin printf '__sw_lim; builtin unset -f __sw_lim\\n'",
  ];
}
