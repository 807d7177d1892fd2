/**
 * Pure builders for the bash scripts a session runs. No I/O happens here, so
 * every script shape can be unit-tested as a string.
 *
 * Every command is a fresh `bash -c SCRIPT`. The script sources the session
 * snapshot, `cd`s to the session cwd, `eval`s the command, and from an EXIT
 * trap writes a new snapshot and prints the cwd marker. Only bash builtins run
 * on the hot path: each external process (even `mv`) would cost about as much
 * as the bash start itself.
 */

import type { SessionPaths } from "./environment.js";
import { CAPTURE_UMASK_LINE, stateDumpLines } from "./state-dump.js";

export function sessionPaths(tempDir: string, sessionId: string): SessionPaths {
  const dir = tempDir.endsWith("/") ? tempDir.slice(0, -1) : tempDir;
  return {
    snapshot: `${dir}/shellwright-snap-${sessionId}.sh`,
    cwdFile: `${dir}/shellwright-cwd-${sessionId}.txt`,
  };
}

/** Where one call writes its dumps before they are renamed over the session files. */
export function pendingPaths(paths: SessionPaths, callId: string): SessionPaths {
  return { snapshot: `${paths.snapshot}.${callId}.tmp`, cwdFile: `${paths.cwdFile}.${callId}.tmp` };
}

/** Single-quote a string for bash: correct for every input, including newlines and NULs-free binary. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** Quote a cwd for `cd`, leaving a leading `~` for bash to expand on the backend. */
export function quoteCwd(cwd: string): string {
  if (cwd === "~") return "~";
  if (cwd.startsWith("~/")) return cwd.length === 2 ? "~/" : `~/${shellQuote(cwd.slice(2))}`;
  return shellQuote(cwd);
}

export const markerOpen = (sessionId: string): string => `__SHELLWRIGHT_CWD_${sessionId}__`;
export const pidMarker = (sessionId: string): string => `__SHELLWRIGHT_PID_${sessionId}__`;

// The marker is printed with the session id as a separate printf argument, so
// the whole token never appears in the script text (which `ps` can show) and a
// command listing processes cannot fake the end of its own output.
const printMarker = (sessionId: string, cwdExpr: string): string =>
  `builtin printf '\\n__SHELLWRIGHT_CWD_%s__%s__SHELLWRIGHT_CWD_%s__\\n' ${sessionId} "${cwdExpr}" ${sessionId}`;

export interface ScriptPlan {
  sessionId: string;
  paths: SessionPaths;
  /** Unique per call; names this call's pending dump files. */
  callId: string;
  /**
   * True when the script itself must move its dumps into place with `mv`
   * (remote backends). The local backend renames from Node instead, which
   * costs no extra process.
   */
  renameInScript: boolean;
  /** Write the cwd file (backends that read it instead of the marker). */
  writeCwdFile: boolean;
}

/**
 * The dump that ends every call: the environment, shell options, functions and
 * aliases, written whole into a pending file (renamed over the snapshot later,
 * so a concurrent call never sources a half-written one), then the cwd.
 */
function epilogue(
  plan: ScriptPlan,
  options: { filterPrivateFunctions: boolean; dumpSnapshot: boolean; reportCwd?: boolean },
): string {
  const pending = pendingPaths(plan.paths, plan.callId);
  const snap = shellQuote(pending.snapshot);
  const lines = ["builtin set +e"];
  if (options.dumpSnapshot) lines.push(CAPTURE_UMASK_LINE);
  lines.push("builtin umask 077");
  if (options.dumpSnapshot) {
    let functionsArray: string | undefined;
    if (options.filterPrivateFunctions) {
      // Filter by *name*: grepping `declare -f` output drops only the header
      // line of a private function and leaves its body to run at source time.
      lines.push(
        `builtin declare -F >| ${snap}`,
        "__sw_fns=()",
        `while builtin read -r _ _ __sw_f; do [[ $__sw_f == _[!_]* ]] || __sw_fns+=("$__sw_f"); done < ${snap}`,
      );
      functionsArray = "__sw_fns";
    }
    lines.push(
      `{\n${stateDumpLines({ functionsArray }).join("\n")}\n} >| ${snap} 2>/dev/null || __sw_ec=$((__sw_ec ? __sw_ec : 1))`,
    );
    if (plan.renameInScript) lines.push(`command mv -f ${snap} ${shellQuote(plan.paths.snapshot)}`);
  }
  if (options.reportCwd === false) lines.push("__sw_cwd=");
  // A deleted cwd is no news to report (bash may even claim "<dir>/." for it).
  else
    lines.push('builtin cd -P . 2>/dev/null && [[ $PWD != "$__sw_start" && -d $PWD ]] && __sw_cwd=$PWD || __sw_cwd=');
  if (plan.writeCwdFile) {
    const cwdTmp = shellQuote(pending.cwdFile);
    let write = `[[ -n $__sw_cwd ]] && builtin printf %s "$__sw_cwd" > ${cwdTmp}`;
    if (plan.renameInScript) write += ` && command mv -f ${cwdTmp} ${shellQuote(plan.paths.cwdFile)}`;
    lines.push(write);
  }
  lines.push(printMarker(plan.sessionId, "$__sw_cwd"));
  return lines.join("\n");
}

/**
 * The one-time bootstrap. It runs non-login first to remember the caller's
 * PATH, then re-executes itself as a login shell (so the user's profile loads)
 * and puts the remembered entries back in front: a login profile that resets
 * PATH must not hide a venv or ~/.local/bin.
 */
export function buildInitScript(plan: ScriptPlan & { cwd?: string }): string {
  const inner = [
    plan.cwd === undefined ? "" : `builtin cd -P -- ${quoteCwd(plan.cwd)} || builtin exit 126`,
    "builtin set -f; __sw_path=$__SHELLWRIGHT_PRE_PATH; IFS=:",
    'for __sw_d in $PATH; do [[ -z $__sw_d ]] && continue; case ":$__sw_path:" in *":$__sw_d:"*) ;; *) __sw_path=${__sw_path:+$__sw_path:}$__sw_d ;; esac; done',
    "builtin unset IFS __SHELLWRIGHT_PRE_PATH; builtin set +f; PATH=$__sw_path",
    "__sw_start= __sw_ec=0",
    epilogue(plan, { filterPrivateFunctions: true, dumpSnapshot: true }),
    "builtin exit $__sw_ec",
  ]
    .filter(Boolean)
    .join("\n");
  return `exec 2>&1\nexport __SHELLWRIGHT_PRE_PATH="$PATH"\nexec "$BASH" -l -c ${shellQuote(inner)}`;
}

export interface CommandPlan extends ScriptPlan {
  command: string;
  cwd: string;
  /** False after a failed init: no snapshot to source or dump (the call runs as `bash -l`). */
  snapshotReady: boolean;
  /** Stdin bytes to embed in the script (backends whose exec API has no stdin). */
  embeddedStdin?: Uint8Array;
  /** True when stdin arrives on the process's own pipe. */
  stdinOnPipe: boolean;
  /** Print the wrapper's PID first, for backends that kill the tree remotely. */
  reportPid: boolean;
  /** True when `cwd` is the session's own (no per-call cwd): a deleted one falls back to its nearest ancestor. */
  sessionCwd?: boolean;
  /** Leave the session's env and cwd as they are: no snapshot dump, no cwd change reported. */
  isolated?: boolean;
}

export function buildCommandScript(plan: CommandPlan): string {
  // One stream, in order: stderr joins stdout before anything else runs.
  const lines: string[] = ["exec 2>&1"];
  if (plan.reportPid) lines.push(`builtin printf '__SHELLWRIGHT_PID_%s__%s__\\n' ${plan.sessionId} "$$"`);
  if (plan.snapshotReady) {
    lines.push(
      `builtin source ${shellQuote(plan.paths.snapshot)} >/dev/null 2>&1 || builtin echo 'shellwright: the session snapshot is missing; exported variables were reset' >&2`,
    );
  }
  lines.push(
    ...enterCwd(plan),
    `builtin trap ${shellQuote(`__sw_ec=$?\n${epilogue(plan, { filterPrivateFunctions: false, dumpSnapshot: plan.snapshotReady && plan.isolated !== true, reportCwd: plan.isolated !== true })}\nbuiltin exit $__sw_ec`)} EXIT`,
    `eval ${shellQuote(plan.command)}${stdinRedirect(plan)}`,
  );
  return lines.join("\n");
}

/**
 * `cd` to the command's cwd; 126 when it cannot be entered. When the session's
 * own directory was deleted (by this agent or anyone), it would otherwise be
 * 126 forever, even for `cd /tmp`: the command then runs in the nearest
 * ancestor that exists, says so, and the session moves there.
 */
function enterCwd(plan: CommandPlan): string[] {
  const cd = `builtin cd -P -- ${quoteCwd(plan.cwd)}`;
  if (!plan.sessionCwd || !plan.cwd.startsWith("/")) return [`${cd} || builtin exit 126`, "__sw_start=$PWD"];
  return [
    `if ${cd} 2>/dev/null; then __sw_start=$PWD; else`,
    `  __sw_d=${shellQuote(plan.cwd)}`,
    '  until builtin cd -P -- "${__sw_d:-/}" 2>/dev/null; do [[ -z $__sw_d ]] && builtin exit 126; __sw_d=${__sw_d%/*}; done',
    `  builtin echo "shellwright: the session's directory ${plan.cwd.replaceAll(/[\\"$`]/g, "\\$&")} no longer exists; running in $PWD" >&2`,
    "  __sw_start=",
    "fi",
  ];
}

function stdinRedirect(plan: CommandPlan): string {
  if (plan.embeddedStdin !== undefined && plan.embeddedStdin.length > 0) {
    // Base64 in a heredoc: byte-exact (a raw heredoc adds a newline), and the
    // delimiter cannot collide with the data (`_` is not in the base64 alphabet).
    const delimiter = `__SHELLWRIGHT_STDIN_${plan.callId}`;
    const encoded = Buffer.from(plan.embeddedStdin)
      .toString("base64")
      .replace(/.{1,76}/g, "$&\n");
    return ` 0< <(base64 -d <<'${delimiter}'\n${encoded}${delimiter}\n)`;
  }
  // No data: an empty stdin, never an open pipe, so `cat` or `read` return at once.
  return plan.stdinOnPipe ? "" : " 0</dev/null";
}
