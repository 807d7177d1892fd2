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

// Args: pgid dir mark signal. Signals every process of the group and every one carrying the mark (one that left
// the group with setsid), twice over /proc (a child forked during the first walk is met in the second), sparing
// the wrapper, the bounders and the stdin holder (`keep`, `holder`) and this shell. Builtins only. Without /proc,
// the group.
const SIGNAL_FUNCTION = [
  "__sw_signal() {",
  '  local p=$1 d=$2 mark=$3 sig=$4 keep=" $1 $$ " a= b= f pid line x pass e',
  "  local -A hit=()",
  '  [[ -s $d/keep ]] && builtin read -r a b < "$d/keep" && keep+="$a $b "',
  '  [[ -s $d/holder ]] && builtin read -r a < "$d/holder" && keep+="$a "',
  '  if [[ ! -d /proc/self ]]; then builtin kill -s "$sig" -- "-$p" 2>/dev/null; return 0; fi',
  "  for pass in 1 2; do",
  "    for f in /proc/[0-9]*; do",
  "      pid=${f#/proc/}",
  '      [[ -n ${hit[$pid]-} || $keep == *" $pid "* ]] && continue',
  '      { IFS= builtin read -r line < "$f/stat"; } 2>/dev/null || continue',
  "      line=${line##*) }; builtin set -f; builtin set -- $line; builtin set +f",
  '      if [[ $3 != "$p" ]]; then',
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
