/**
 * The session's editor: a stand-in that says how to do it without one.
 *
 * Nothing in a call can type into a full-screen editor, so `git commit`
 * without `-m`, `git rebase -i`, `crontab -e` and the like would sit until
 * the call's timeout behind a screen of escape codes. The init script sets
 * GIT_EDITOR, GIT_SEQUENCE_EDITOR, VISUAL and EDITOR to a stand-in that prints
 * the way around the editor and fails, so the command returns at once with
 * advice. It is a shell snippet in the value, not a file: it runs wherever the
 * session runs (a container, an ssh host, a box) with nothing to copy there,
 * and git, crontab and most other callers run the value with `sh -c`.
 *
 * A user who chose an editor that can work here keeps it: when any of the four
 * names another command than a terminal editor (in the session's env, the
 * backend's environment or the login profile), the unset ones stay unset,
 * so `EDITOR=true` still makes `git rebase -i` run its todo as is.
 */

/** What the stand-in prints (on stderr). No single quote: it is single-quoted as is below. */
export const EDITOR_ADVICE =
  "shellwright: no interactive editor in this session (nothing can type into it). Without one: " +
  'git commit -m "message" (or -F file, --amend --no-edit); git merge/revert/cherry-pick --no-edit; ' +
  'git rebase -i: GIT_SEQUENCE_EDITOR="sed -i 2s/^pick/fixup/" git rebase -i HEAD~2; ' +
  "files: the write_file and patch tools, or sed -i / a heredoc.";

/**
 * Holds the advice: git repeats the editor's command in its error, so the command stays short. Not `SHELLWRIGHT_…`:
 * the snapshot treats those names as the wrapper's own.
 */
export const ADVICE_VARIABLE = "NO_EDITOR_HELP";

/** The editor command: prints the advice and fails, whatever arguments (the file) it is given. */
export const EDITOR_STAND_IN = `printf '%s\\n' "\${${ADVICE_VARIABLE}:-shellwright: no interactive editor here}" >&2; false`;

export const EDITOR_VARIABLES = ["GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "VISUAL", "EDITOR"] as const;

/**
 * Editors that wait for keys on the terminal. A variable naming one of them is
 * no choice that can work here (npm itself sets EDITOR=vi for every script and
 * npx run, and many profiles set EDITOR=vim): it gets the stand-in too.
 */
const TERMINAL_EDITORS =
  "vi|vim|vim\\.[a-z]+|nvim|nvi|view|vimdiff|nano|rnano|pico|emacs|emacs-nox|emacs[0-9]+|micro|joe|jed|mcedit|ne|hx|helix|kak|editor|sensible-editor";

const quote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;

/**
 * Bash lines for the init script, after the login profile: each of the four
 * that names a terminal editor gets the stand-in; the unset ones get it too,
 * unless one of them names another command (`true`, `sed -i …`), which then
 * stays the session's editor, as git's own fallbacks would use it.
 */
export function editorDefaultsLines(): string[] {
  const names = EDITOR_VARIABLES.join(" ");
  return [
    `__sw_si=${quote(EDITOR_STAND_IN)} __sw_re=${quote(`^(${TERMINAL_EDITORS})$`)} __sw_ch= __sw_set=`,
    `for __sw_v in ${names}; do __sw_e=\${!__sw_v:-}; __sw_e=\${__sw_e#"\${__sw_e%%[![:space:]]*}"}; __sw_e=\${__sw_e%%[[:space:]]*}; ` +
      `if [[ -z $__sw_e ]]; then :; elif [[ \${__sw_e##*/} =~ $__sw_re ]]; then builtin export "$__sw_v=$__sw_si"; __sw_set=1; else __sw_ch=1; fi; done`,
    `[[ -n $__sw_ch ]] || for __sw_v in ${names}; do [[ -n \${!__sw_v:-} ]] || builtin export "$__sw_v=$__sw_si"; __sw_set=1; done`,
    `[[ -z $__sw_set ]] || builtin export ${ADVICE_VARIABLE}=${quote(EDITOR_ADVICE)}`,
    "builtin unset __sw_si __sw_re __sw_ch __sw_set __sw_v __sw_e",
  ];
}
