/**
 * Pure builders for the bash scripts a session runs. No I/O happens here, so
 * every script shape can be unit-tested as a string.
 *
 * Every call is two shells. The *outer* one (`bash -c SCRIPT`) never runs a
 * word of user code: it reads the call's secret from the first line of stdin,
 * starts the *inner* shell as a new `bash` (exec'd, so the secret is not in
 * its memory), waits for it, commits the state the inner one dumped and
 * prints the end marker, which carries the secret. The inner shell sources
 * the snapshot, enters the session's directory, `eval`s the command and, from
 * an EXIT trap, dumps the whole state (env, options, functions, aliases and
 * cwd) into one pending file. It exits 0 only when that dump is complete; the
 * outer shell commits only then, and only if it is still alive (a timeout or
 * an interrupt kills it first), so a killed call commits nothing.
 *
 * Every word the inner shell runs around the command is immune to the user's
 * functions, aliases, options and PATH: `builtin` on every builtin, functions
 * named `builtin` or `command` removed in POSIX mode (where `unset` beats a
 * function), wrapper lines parsed with expand_aliases off, xtrace silenced
 * first thing in the trap.
 */

import { UNSET_MARKS } from "./call-marks.js";
import type { SessionPaths } from "./environment.js";
import { editorDefaultsLines } from "./editor-defaults.js";
import { CAPTURE_UMASK_LINE, stateDumpLines } from "./state-dump.js";
import { quoteCwd, shellQuote } from "./quote.js";
import { enterCwd, NEXT_CWD } from "./cwd-script.js";
import { reportPidLines } from "./wrapper-pid.js";

export { quoteCwd, shellQuote } from "./quote.js";
export { enterCwd, NEXT_CWD } from "./cwd-script.js";
export { describeSaveFailure, parseMarkerPayload, type MarkerPayload } from "./marker-payload.js";

export function sessionPaths(tempDir: string, sessionId: string): SessionPaths {
  const dir = tempDir.endsWith("/") ? tempDir.slice(0, -1) : tempDir;
  return {
    snapshot: `${dir}/shellwright-snap-${sessionId}.sh`,
    cwdFile: `${dir}/shellwright-cwd-${sessionId}.txt`,
  };
}

/** Where one call writes its dump before it is renamed over the session's snapshot. */
export function pendingPaths(paths: SessionPaths, callId: string): SessionPaths {
  return { snapshot: `${paths.snapshot}.${callId}.tmp`, cwdFile: `${paths.cwdFile}.${callId}.tmp` };
}

/**
 * Joins script lines into one, for lines that are each a whole command or
 * end in a word after which a newline is only a space (`then`, `else`, `do`).
 * No line may hold a newline of its own (a quoted one included).
 */
export function oneLine(lines: readonly string[]): string {
  return lines.reduce(
    (joined, line) => (joined === "" ? line : `${joined}${/\b(then|else|do)$/.test(joined) ? " " : "; "}${line}`),
    "",
  );
}

/** The end marker's delimiter: keyed by the call's secret, which only the outer shell ever holds. */
export const markerOpen = (secret: string): string => `__SHELLWRIGHT_END_${secret}__`;

export interface ScriptPlan {
  sessionId: string;
  paths: SessionPaths;
  /** Unique per call; names this call's pending dump file. */
  callId: string;
  /**
   * True when the outer shell must move the dump into place with `mv`
   * (remote backends). The local backend renames from Node instead, which
   * costs no extra process.
   */
  renameInScript: boolean;
}

/**
 * Removes functions named `builtin` or `command` (which would capture every
 * `builtin X`) in POSIX mode, where the special builtin `unset` is found
 * before any function of that name, then puts POSIX mode back as it was.
 * Only assignments and quoted words: safe to parse with the user's aliases on.
 */
export const UNSHADOW =
  "__sw_px=$SHELLOPTS; POSIXLY_CORRECT=1; \\unset -f builtin command; \\unset POSIXLY_CORRECT; " +
  "[[ :$__sw_px: != *:posix:* ]] || \\builtin set -o posix";

/** Every builtin the epilogue and the dump run: a command may have disabled them (`enable -n`). */
const EPILOGUE_BUILTINS = "alias builtin cd declare echo eval exit printf read set shopt trap ulimit unset";

/**
 * Turns the epilogue's builtins back on (`builtin` itself too, through plain
 * `enable`, if it was the one disabled). They are not part of the state: each
 * call's shell starts with all of them.
 */
export const ENABLE_BUILTINS = `\\builtin enable ${EPILOGUE_BUILTINS} 2>/dev/null || \\enable ${EPILOGUE_BUILTINS} 2>/dev/null`;

/**
 * What the dump group runs when it failed (`{ …dump…; } >| FILE || …`): it
 * writes `#F STATUS WHY HARD-F` over the start of FILE, without truncating it
 * (so a full disk still has the blocks it had), and exits 125. WHY is what
 * `__sw_why` says (`open`: the group's redirection failed; `limit`: even the
 * limit lines did not fit) or `write`; HARD-F lets Node name a hard file size
 * limit. Both limits are raised first so that this line can be written. When
 * even that line cannot be written (a state dir that was full before the
 * call: FILE has no room kept), it exits with the command's status, and the
 * outer shell or the helper, which saw the room missing, says why.
 */
export function saveFailed(status: string, file: string): string {
  return (
    // No redirection before the raise: with too few files one would fail.
    "{ builtin ulimit -S -n hard; builtin ulimit -S -f hard; " +
    `{ builtin printf '#F %s %s ' ${status} "\${__sw_why:-write}" && builtin ulimit -H -f; } 1<> ${file} 2>/dev/null && builtin exit 125; builtin exit ${status}; }`
  );
}

/** Room the dump file is given before the call, so that a call that fills the disk still has a block for `#F`. */
export const DUMP_RESERVE_BYTES = 4096;

/** The snapshot's line that names the session's cwd (`__sw_scwd=…`), which a call enters after sourcing it. */
export const SNAPSHOT_CWD_VARIABLE = "__sw_scwd";

function epilogue(plan: ScriptPlan, options: { dump: boolean; filterPrivateFunctions?: boolean }): string {
  const pending = shellQuote(pendingPaths(plan.paths, plan.callId).snapshot);
  const lines = [
    // Parsed with the user's aliases on (except `{`, an alias nobody should
    // define: the call's state is then not saved). xtrace of this group goes
    // to /dev/null, and it turns xtrace off for the rest.
    `{ __sw_ec=$? __sw_fl=$- __sw_bo=$BASHOPTS; ${ENABLE_BUILTINS}; ${UNSHADOW}; \\builtin set +x +v +e +u; \\builtin shopt -u expand_aliases; \\builtin unset -f trap; \\builtin unset -v __sw_epi; \\builtin trap - ERR DEBUG RETURN; } 2>/dev/null`,
    // The user's own EXIT trap (caught by the wrapper's `trap` function) runs first.
    `[[ -n \${__sw_uexit-} ]] && { [[ :$__sw_bo: != *:expand_aliases:* ]] || builtin shopt -s expand_aliases; builtin eval "$__sw_uexit"; { ${ENABLE_BUILTINS}; ${UNSHADOW}; \\builtin set +x +v +e +u; \\builtin shopt -u expand_aliases; \\builtin unset -f trap; } 2>/dev/null; }`,
    NEXT_CWD,
    // Only `%` and newline are encoded: the outer shell reads this header line with `read -r`.
    "__sw_h=${__sw_next//[%]/%25}; __sw_h=${__sw_h//$'\\n'/%0A}",
  ];
  const restoreOptions =
    "[[ :$__sw_bo: != *:expand_aliases:* ]] || builtin shopt -s expand_aliases; [[ $__sw_fl != *x* ]] || builtin set -x; [[ $__sw_fl != *v* ]] || builtin set -v";
  // The inner shell never changes its umask (the outer one made the pending
  // file), so the one read here is the user's. The dump lines change shell
  // options: the epilogue exits right after them.
  if (options.dump) {
    // The kill marks belong to this call alone: a snapshot that kept them would tag the next calls.
    lines.push(UNSET_MARKS, CAPTURE_UMASK_LINE);
  }
  const body = options.dump ? ["", ...stateDumpLines()] : [];
  lines.push(
    // A write past `ulimit -f` must fail (and be reported), not kill the shell.
    "builtin trap '' XFSZ; __sw_why=open",
    // The shell's own options are put back for the dump only: its trace lands in /dev/null.
    // The group's status is its last write's: a dump cut short is never committed.
    `{ __sw_why=; builtin printf '#%s %s\\n' "$__sw_ec" "$__sw_h"${options.dump ? `; ${restoreOptions}` : ""}${body.join("; ")}; ` +
      `builtin set +x +v; builtin printf '__sw_scwd=%q\\n' "$__sw_next"; } >| ${pending} 2>/dev/null || ${saveFailed('"$__sw_ec"', pending)}`,
    "builtin exit 0",
  );
  if (options.filterPrivateFunctions) {
    // Filter by *name*: the pending file is scratch space until the dump overwrites it.
    lines.splice(
      lines.length - 2,
      0,
      `builtin declare -F >| ${pending}`,
      `while builtin read -r _ _ __sw_f; do [[ $__sw_f != _[!_]* ]] || builtin unset -f -- "$__sw_f"; done < ${pending}`,
    );
  }
  return lines.join("\n");
}

interface OuterOptions {
  inner: string;
  /** The inner shell is a login shell (the session's first shell, or after a failed init). */
  login: boolean;
  /** Give the inner shell this stdin instead of the rest of the outer's. */
  innerStdin?: string;
  reportPid: boolean;
  /** The inner shell dumps state into the pending file; false: the call only completes. */
  commit: boolean;
  /** The inner shell cannot restore the user's umask from a snapshot: hand the outer's over. */
  passUmask: boolean;
  /** A script the inner shell gets as $1 (before the umask), to `eval` without moving its own line numbers. */
  rest?: string;
  /** The whole stdin (secret line first) embedded in the script, for backends without one. */
  embeddedStdin?: Uint8Array;
  callId: string;
  /** Leave stderr apart from stdout, and end it with a keyed marker of its own (ExecuteOptions.separateStreams). */
  separateStreams?: boolean;
  /** Lines run once the secret and the caller's umask are read (the init's login snapshot reuse). */
  prelude?: string[] | undefined;
}

/**
 * The outer shell. Plain words are fine here: nothing of the user's runs in
 * it, and it starts from an empty environment (or the caller's, at init).
 */
function outerScript(plan: ScriptPlan, options: OuterOptions): string {
  const pending = pendingPaths(plan.paths, plan.callId).snapshot;
  // stderr joins stdout, unless the call keeps them apart: then stderr gets its own end marker (below).
  const lines = options.separateStreams === true ? [] : ["exec 2>&1"];
  if (options.reportPid) lines.push(...reportPidLines(plan.sessionId));
  if (options.embeddedStdin !== undefined)
    lines.push(`exec 0< <(${base64Heredoc(options.embeddedStdin, options.callId)})`);
  lines.push("IFS= builtin read -r __sw_key || builtin exit 125");
  // `bash` is the inner shell's $0, the name its messages start with, as in a terminal.
  let params = "";
  if (options.rest !== undefined) {
    lines.push(`__sw_rest=${shellQuote(options.rest)}`);
    params += ' "$__sw_rest"';
  }
  if (options.passUmask) {
    lines.push("__sw_um=$(builtin umask)");
    params += ' "$__sw_um"';
  }
  lines.push(...(options.prelude ?? []));
  const args = ` bash${params}`;
  if (options.commit) {
    // The pending file is made here, private, so the inner shell never changes its umask to write it.
    // No room for it (a full state dir): the command still runs (it may be the `rm` that frees space), and
    // the call says its state was not saved.
    lines.push(
      `builtin umask 077; __sw_nores=; builtin printf '%${DUMP_RESERVE_BYTES}s' '' >| ${shellQuote(pending)} 2>/dev/null || { __sw_nores=1; [[ -f ${shellQuote(pending)} ]]; } || builtin exit 125`,
    );
  }
  // The inner shell counts itself again: it should see the level a single wrapper shell had.
  lines.push(`__sw_inner=${shellQuote(options.inner)}`, "((SHLVL > 0)) && SHLVL=$((SHLVL - 1))");
  const bash = `"$BASH"${options.login ? " -l" : ""}`;
  const stdin = options.innerStdin ?? "";
  // One argv string is capped at 128 KiB: a longer inner script is read from a pipe instead.
  lines.push(
    Buffer.byteLength(options.inner) > 100_000
      ? // A script file is its own $0: the arguments start at $1.
        `${bash} <(builtin printf %s "$__sw_inner")${params}${stdin}`
      : `${bash} -c "$__sw_inner"${args}${stdin}`,
    "__sw_rc=$? __sw_out=N",
  );
  if (options.commit) {
    const commit = plan.renameInScript
      ? // Stamp after the rename, then report the cwd of the snapshot as it is
        // now: whatever order the renames and stamps interleave in, the report
        // with the latest stamp read the snapshot after the last rename.
        `command -p mv -f -- ${shellQuote(pending)} ${shellQuote(plan.paths.snapshot)} && { __sw_t=$EPOCHREALTIME; __sw_c=\${BASH_REMATCH[2]}; ` +
        `IFS= builtin read -r __sw_h < ${shellQuote(plan.paths.snapshot)} 2>/dev/null && [[ $__sw_h =~ $__sw_re ]] && __sw_c=\${BASH_REMATCH[2]}; __sw_out=C$__sw_t:$__sw_c; }`
      : "__sw_out=C:${BASH_REMATCH[2]}";
    lines.push(
      "__sw_re='^#([0-9]+) (.*)$' __sw_fre='^#F ([0-9]+) (.*)$'",
      `if [[ $__sw_rc == 0 ]] && IFS= builtin read -r __sw_h < ${shellQuote(pending)} 2>/dev/null && [[ $__sw_h =~ $__sw_re ]]; then`,
      `  __sw_rc=\${BASH_REMATCH[1]}; ${commit}`,
      // The dump failed (saveFailed): the command's own status, and why.
      `elif [[ $__sw_rc == 125 ]] && IFS= builtin read -r __sw_h < ${shellQuote(pending)} 2>/dev/null && [[ $__sw_h =~ $__sw_fre ]]; then`,
      "  __sw_rc=${BASH_REMATCH[1]} __sw_out=F${BASH_REMATCH[2]}",
      "elif [[ -n $__sw_nores ]]; then __sw_out=Fwrite",
      "fi",
    );
    // Where the script renames, nobody else removes a dump that was not committed (it may hold secrets).
    if (plan.renameInScript)
      lines.push(`[[ $__sw_out == C* ]] || command -p rm -f -- ${shellQuote(pending)} 2>/dev/null`);
  }
  if (options.separateStreams === true)
    lines.push(`builtin printf '__SHELLWRIGHT_END_%s__E__SHELLWRIGHT_END_%s__\\n' "$__sw_key" "$__sw_key" >&2`);
  lines.push(
    // No newline in front: the scanner would have to hold back every trailing
    // newline of the output until more came, and a streamed line would arrive late.
    `builtin printf '__SHELLWRIGHT_END_%s__%s__SHELLWRIGHT_END_%s__\\n' "$__sw_key" "$__sw_out" "$__sw_key"`,
    "builtin exit $__sw_rc",
  );
  return lines.join("\n");
}

/**
 * The one-time bootstrap. It runs non-login first to remember the caller's
 * PATH, then re-executes itself as a login shell (so the user's profile loads)
 * and puts the remembered entries back in front: a login profile that resets
 * PATH must not hide a venv or ~/.local/bin.
 */
export function buildInitScript(
  plan: ScriptPlan & { cwd?: string; reportPid?: boolean; embeddedStdin?: Uint8Array; prelude?: string[] },
): string {
  const inner = [
    plan.cwd === undefined ? "" : `builtin cd -P -- ${quoteCwd(plan.cwd)} || builtin exit 126`,
    "builtin set -f; __sw_path=$__SHELLWRIGHT_PRE_PATH; IFS=:",
    'for __sw_d in $PATH; do [[ -z $__sw_d ]] && continue; case ":$__sw_path:" in *":$__sw_d:"*) ;; *) __sw_path=${__sw_path:+$__sw_path:}$__sw_d ;; esac; done',
    "builtin unset IFS __SHELLWRIGHT_PRE_PATH; builtin set +f; PATH=$__sw_path",
    // After the profile: an editor the user chose there is kept (src/core/editor-defaults.ts).
    ...editorDefaultsLines(),
    "__sw_start= __sw_scwd=$PWD",
    "builtin true",
    epilogue(plan, { dump: true, filterPrivateFunctions: true }),
  ]
    .filter(Boolean)
    .join("\n");
  const first = `builtin umask "$1"\nexport __SHELLWRIGHT_PRE_PATH="$PATH"\nexec "$BASH" -l -c ${shellQuote(inner)}`;
  return outerScript(plan, {
    inner: first,
    login: false,
    innerStdin: " 0</dev/null",
    reportPid: plan.reportPid === true,
    commit: true,
    passUmask: true,
    ...(plan.embeddedStdin === undefined ? {} : { embeddedStdin: plan.embeddedStdin }),
    callId: plan.callId,
    prelude: plan.prelude,
  });
}

export interface CommandPlan extends ScriptPlan {
  command: string;
  /** The per-call cwd, or (sessionCwd) the session's cwd as Node knows it: used when the snapshot names none. */
  cwd: string;
  /** False after a failed init: no snapshot to source (the inner shell runs as `bash -l`). */
  snapshotReady: boolean;
  /** The whole stdin, secret line first, embedded in the script (backends whose exec API has no stdin). */
  embeddedStdin?: Uint8Array;
  /** True when the command has stdin data after the secret line. */
  stdinOnPipe: boolean;
  /** Print the outer shell's PID first, for backends that kill the tree remotely. */
  reportPid: boolean;
  /** The session's cwd as Node knows it: the one to keep when the snapshot names none. */
  knownCwd?: string;
  /** True when `cwd` is the session's own (no per-call cwd): the snapshot's cwd wins, and a deleted one falls back to its nearest ancestor. */
  sessionCwd?: boolean;
  /** Leave the session's state as it is: no dump, no commit. */
  isolated?: boolean;
  /** Keep stderr apart from stdout (ExecuteOptions.separateStreams). */
  separateStreams?: boolean;
}

export function buildCommandScript(plan: CommandPlan): string {
  const isolated = plan.isolated === true;
  const load = plan.snapshotReady
    ? `builtin source ${shellQuote(plan.paths.snapshot)} >/dev/null 2>&1 || builtin echo 'shellwright: the session snapshot is missing; the session state was reset' >&2; `
    : 'builtin umask "$2"; ';
  const rest = [...enterCwd(plan)];
  if (!isolated) {
    rest.push(
      // Kept in a variable too, so the `trap` function can hide it from a listing.
      `__sw_epi=${shellQuote(epilogue(plan, { dump: plan.snapshotReady }))}; builtin trap "$__sw_epi" EXIT`,
      // A user `trap … EXIT` would replace the epilogue: it is kept aside and run first instead.
      TRAP_FUNCTION,
    );
  }
  // One line, parsed before the snapshot defines any alias or function; the
  // rest is parsed when it runs, with aliases off. The command's `eval` stands
  // on line 1, so its messages and $LINENO count from its own first line.
  const inner =
    `__sw_scwd=${quoteCwd(plan.knownCwd ?? plan.cwd)} __sw_uexit= __sw_al=; ` +
    `${load}__sw_uexit=; ${UNSHADOW}; [[ :$BASHOPTS: != *:expand_aliases:* ]] || __sw_al=1; builtin shopt -u expand_aliases; ` +
    // The rest comes as $1 (outerScript): the command sees no positional parameter.
    'builtin eval "$1"; builtin set --; ' +
    `[[ -z $__sw_al ]] || builtin shopt -s expand_aliases; builtin eval -- ${shellQuote(plan.command)}${plan.stdinOnPipe ? "" : " 0</dev/null"}`;
  return outerScript(plan, {
    inner,
    rest: rest.join("\n"),
    login: !plan.snapshotReady,
    innerStdin: plan.stdinOnPipe ? "" : " 0</dev/null",
    reportPid: plan.reportPid,
    commit: !isolated,
    passUmask: !plan.snapshotReady,
    ...(plan.embeddedStdin === undefined ? {} : { embeddedStdin: plan.embeddedStdin }),
    callId: plan.callId,
    separateStreams: plan.separateStreams === true,
  });
}

/**
 * The wrapper's `trap`: sets every signal but EXIT through the builtin and
 * keeps an EXIT action aside for the epilogue to run. It runs in POSIX mode,
 * where `trap` and `unset` are the special builtins whatever the user defined.
 */
export const TRAP_FUNCTION = [
  "trap() {",
  "  __sw_tp=${POSIXLY_CORRECT-$'\\1'}; POSIXLY_CORRECT=1",
  '  __sw_ta=("$@") __sw_ts=() __sw_tx=',
  // A listing runs in the user's own mode: in POSIX mode `trap -p` also lists every default.
  "  case ${1-} in -p|-l|-P|'')",
  "    if [[ $__sw_tp == $'\\1' ]]; then unset POSIXLY_CORRECT; else POSIXLY_CORRECT=$__sw_tp; fi",
  // The listing shows the user's EXIT action (or none) in place of the epilogue.
  // In a subshell the EXIT trap is left alone: setting one there would run it at the subshell's exit.
  '    if [[ $BASHPID == "${__sw_jpid:-$$}" ]]; then builtin trap -- "${__sw_uexit:--}" EXIT; builtin trap "$@"; __sw_tx=$?; builtin trap -- "$__sw_epi" EXIT',
  '    else builtin trap "$@"; __sw_tx=$?; fi; POSIXLY_CORRECT=1;; *)',
  '    [[ $1 == -- ]] && __sw_ta=("${@:2}")',
  '    if ((${#__sw_ta[@]} == 1)); then __sw_tact=-; else __sw_tact=${__sw_ta[0]}; __sw_ta=("${__sw_ta[@]:1}"); fi',
  '    for __sw_t in "${__sw_ta[@]}"; do case ${__sw_t^^} in EXIT|0|SIGEXIT) [[ $__sw_tact == - ]] && __sw_uexit= || __sw_uexit=$__sw_tact;; *) __sw_ts+=("$__sw_t");; esac; done',
  '    ((${#__sw_ts[@]} == 0)) || trap -- "$__sw_tact" "${__sw_ts[@]}"; __sw_tx=$?;;',
  "  esac",
  "  if [[ $__sw_tp == $'\\1' ]]; then unset POSIXLY_CORRECT; else POSIXLY_CORRECT=$__sw_tp; fi",
  // Not `return`, which a function could shadow now that POSIX mode is off again.
  "  [[ $__sw_tx == 0 ]]",
  "}",
].join("\n");

function base64Heredoc(bytes: Uint8Array, callId: string): string {
  // Base64 in a heredoc: byte-exact (a raw heredoc adds a newline), and the
  // delimiter cannot collide with the data (`_` is not in the base64 alphabet).
  const delimiter = `__SHELLWRIGHT_STDIN_${callId}`;
  const encoded = Buffer.from(bytes)
    .toString("base64")
    .replace(/.{1,76}/g, "$&\n");
  return `base64 -d <<'${delimiter}'\n${encoded}${delimiter}\n`;
}
