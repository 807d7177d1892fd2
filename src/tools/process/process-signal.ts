/**
 * What a program (sdk/spawn.ts, an API server) may ask of a background process beyond the tool's: a signal of its
 * choice, variables of its own, its streams apart; the checks of those options, and the signal's script.
 */

import { InvalidOptionError } from "../../core/errors.js";
import { describe, describeSecret } from "../../core/options.js";
import { shellQuote } from "../../core/script.js";
import { MARKER_VARIABLE, pollScript, type PollRequest } from "./process-scripts.js";

/** The signals `signal` sends: a request to stop, and the one that cannot be refused. */
export const PROCESS_SIGNALS = ["SIGTERM", "SIGKILL"] as const;
export type ProcessSignal = (typeof PROCESS_SIGNALS)[number];

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Bash's read-only variables (an export of one fails) and the wrapper's own names. */
const RESERVED = new Set(["BASHOPTS", "BASHPID", "BASH_VERSINFO", "EUID", "PPID", "SHELLOPTS", "UID", MARKER_VARIABLE]);

/** `env`'s entries, checked: names a shell can export, string values without NUL (never shown in an error). */
export function checkProcessEnv(env: unknown): Record<string, string> {
  if (env === undefined) return {};
  if (typeof env !== "object" || env === null || Array.isArray(env))
    throw new InvalidOptionError("env", `env must be an object of variable names to strings, got ${describe(env)}`);
  for (const [name, value] of Object.entries(env)) {
    if (!NAME.test(name) || RESERVED.has(name) || name.startsWith("__sw_"))
      throw new InvalidOptionError(
        `env.${name}`,
        `env: ${describe(name)} is not a variable name a process may be given (letters, digits and _, not starting with a digit; not a shell's read-only variable)`,
      );
    if (typeof value !== "string" || value.includes("\0"))
      throw new InvalidOptionError(
        `env.${name}`,
        `env.${name} must be a string without NUL bytes, got ${describeSecret(value)}`,
      );
  }
  return env as Record<string, string>;
}

/** The stream options together: `separateStreams` (not with a PTY), and the listeners each mode takes. */
export function checkStreamOptions(options: {
  separateStreams?: unknown;
  pty?: unknown;
  onOutput?: unknown;
  onStdout?: unknown;
  onStderr?: unknown;
  onStreamsEnd?: unknown;
}): boolean {
  const apart = options.separateStreams;
  if (apart !== undefined && typeof apart !== "boolean")
    throw new InvalidOptionError("separateStreams", `separateStreams must be a boolean, got ${describe(apart)}`);
  if (apart === true && options.pty !== undefined)
    throw new InvalidOptionError("separateStreams", "separateStreams cannot go with pty: a terminal is one stream");
  for (const name of ["onOutput", "onStdout", "onStderr", "onStreamsEnd"] as const) {
    const listener = options[name];
    if (listener === undefined) continue;
    if (typeof listener !== "function")
      throw new InvalidOptionError(name, `${name} must be a function, got ${describe(listener)}`);
    if ((name === "onOutput") === (apart === true))
      throw new InvalidOptionError(
        name,
        apart === true
          ? "onOutput is the merged output: with separateStreams, give onStdout and onStderr"
          : `${name} needs separateStreams: true`,
      );
  }
  return apart === true;
}

/** Checks a signal's name. */
export function checkSignal(signal: unknown): ProcessSignal {
  if (!(PROCESS_SIGNALS as readonly unknown[]).includes(signal))
    throw new InvalidOptionError(
      "signal",
      `signal must be one of ${PROCESS_SIGNALS.join(", ")}, got ${describe(signal)}`,
    );
  return signal as ProcessSignal;
}

// Args: pgid dir mark signal. Builtins only (and sleep).
// Targets: every process carrying the mark (one that left the group with setsid), and the members of group `pgid`
// only while it is still ours: its leader alive (not a zombie), leading it, and holding the lock on `dir/lock`
// (fd 9, `lock.tmp` until it is held), or, without the lock (no flock, or the file replaced), having a member that
// carries the mark (a PID that still names a group is never given to a new process). A pgid whose wrapper ended
// unnoticed and whose PID now leads another group fails both, and then only marked processes are signalled.
// Spared: this shell, the wrapper, and the helpers `keep` and `holder` name, but only those that are what the wrapper
// started, since the command can write those files (its stdin is `dir/in`): a child of the wrapper in its group
// that is the holder (`sleep 2147483647`) or a bounder (its stdin a pipe the wrapper writes), and their children.
// A SIGKILL sent before the wrapper wrote `keep` waits for it (1 s at most), so the bounders are known.
// Two walks over /proc: a child forked during the first is met in the second.
// Without /proc, nothing can be checked: the group, if its leader exists (kill -0, as the poll's fallback).
const SIGNAL_FUNCTION = [
  "__sw_signal() {",
  '  local p=$1 d=$2 mark=$3 sig=$4 own= spare=" $$ " helpers=" " a= b= f k x pid line pass e i',
  "  local -A hit=()",
  '  if [[ ! -d /proc/self ]]; then builtin kill -0 "$p" 2>/dev/null && builtin kill -s "$sig" -- "-$p" 2>/dev/null; return 0; fi',
  '  if { IFS= builtin read -r line < "/proc/$p/stat"; } 2>/dev/null; then',
  "    line=${line##*) }; builtin set -f; builtin set -- $line; builtin set +f",
  '    [[ $1 != Z && $3 == "$p" ]] && spare+="$p "',
  "  fi",
  '  if [[ $spare == *" $p "* ]]; then',
  "    for ((i = 0; i < 50; i++)); do [[ -e $d/keep || $sig != KILL ]] && break; command sleep 0.02; done",
  "    [[ /proc/$p/fd/9 -ef $d/lock || /proc/$p/fd/9 -ef $d/lock.tmp ]] && own=1",
  '    [[ -s $d/keep ]] && builtin read -r a b < "$d/keep"',
  '    [[ -s $d/holder ]] && builtin read -r x < "$d/holder"',
  "    for k in $a $b $x; do",
  '      [[ $k =~ ^[0-9]+$ && $k != "$p" ]] || continue',
  '      { IFS= builtin read -r line < "/proc/$k/stat"; } 2>/dev/null || continue',
  "      line=${line##*) }; builtin set -f; builtin set -- $line; builtin set +f",
  '      [[ $1 != Z && $2 == "$p" && $3 == "$p" ]] || continue',
  '      if [[ $k == "$x" ]]; then',
  '        { builtin mapfile -d "" -t e < "/proc/$k/cmdline"; } 2>/dev/null || continue',
  '        [[ ${#e[@]} == 2 && ${e[0]} == sleep && ${e[1]} == 2147483647 ]] && spare+="$k "',
  "      elif [[ -p /proc/$k/fd/0 && ! /proc/$k/fd/0 -ef $d/in ]]; then",
  '        for f in /proc/"$p"/fd/*; do [[ /proc/$k/fd/0 -ef $f ]] && { spare+="$k " helpers+="$k "; break; }; done',
  "      fi",
  "    done",
  // Without the lock (no flock, or the command replaced the file), a member of the group carrying the mark proves
  // it ours: a PID that still names a group is never given to a new process.
  "    [[ -z $own ]] && for f in /proc/[0-9]*; do",
  '      { IFS= builtin read -r line < "$f/stat"; } 2>/dev/null || continue',
  "      line=${line##*) }; builtin set -f; builtin set -- $line; builtin set +f",
  '      [[ $3 == "$p" ]] || continue',
  '      { builtin mapfile -d "" -t e < "$f/environ"; } 2>/dev/null || continue',
  '      for a in "${e[@]}"; do [[ $a == "$mark" ]] && { own=1; break 2; }; done',
  "    done",
  "  fi",
  "  for pass in 1 2; do",
  "    for f in /proc/[0-9]*; do",
  "      pid=${f#/proc/}",
  '      [[ -n ${hit[$pid]-} || $spare == *" $pid "* ]] && continue',
  '      { IFS= builtin read -r line < "$f/stat"; } 2>/dev/null || continue',
  "      line=${line##*) }; builtin set -f; builtin set -- $line; builtin set +f",
  '      [[ $helpers == *" $2 "* ]] && { spare+="$pid " helpers+="$pid "; continue; }',
  '      if [[ -z $own || $3 != "$p" ]]; then',
  "        x=",
  '        { builtin mapfile -d "" -t e < "$f/environ"; } 2>/dev/null || continue',
  '        for a in "${e[@]}"; do [[ $a == "$mark" ]] && { x=1; break; }; done',
  "        [[ -n $x ]] || continue",
  "      fi",
  '      builtin kill -s "$sig" "$pid" 2>/dev/null && hit[$pid]=1',
  "    done",
  "  done",
  "  return 0",
  "}",
].join("\n");

/** Signals the process (SIGNAL_FUNCTION), then polls it: one round trip. */
export function signalScript(request: PollRequest, id: string, signal: ProcessSignal): string {
  const mark = shellQuote(`${MARKER_VARIABLE}=${id}`);
  const call = `__sw_signal ${request.pgid} ${shellQuote(request.files.dir)} ${mark} ${signal.slice(3)}`;
  return [SIGNAL_FUNCTION, call, pollScript([request])].join("\n");
}
