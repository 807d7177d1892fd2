/**
 * A foreground `terminal` command whose program waits for keys on a terminal
 * nobody types into: vi started by `git commit` once the session's EDITOR
 * stand-in was unset, a REPL under a pseudo-terminal the command made itself
 * (`script -qc python3`), a password prompt. It would hold the call until
 * its timeout; it is stopped instead, as an interrupt would stop it, with
 * advice.
 *
 * The command's first act is to print its call's mark (CALL_LINE, an `echo`
 * that leaves the command as pure as it was: docs/fast-path.md), which the
 * tool takes out of the output. Once the call has printed nothing for
 * `stuckInputMs`, the probe (stuck-input-probe.ts) looks for that call's
 * processes in the backend.
 */

import { parseActivity, parseStuck, stuckInputProbe, type StuckProcess } from "./stuck-input-probe.js";

export type { StuckProcess };

/** What the command prints first: its call's mark, after this prefix. */
const CALL_LINE = "__sw_call=";
const CALL_LINE_PATTERN = /^__sw_call=([A-Za-z0-9_-]{12})$/;
/** Lines before the mark's that a shell's -x or -v may print (the traced `echo`). */
const MAX_LEADING_LINES = 2;

/** The command, reporting its call's mark first (on its first line: the command's line numbers stay). */
export function reportingCall(command: string): string {
  return `echo ${CALL_LINE}$SHELLWRIGHT_CALL; ${command}`;
}

/**
 * Takes the mark's line (and a shell's `-x`/`-v` trace of it) out of the
 * start of the output as it streams: `push` returns what to pass on, and
 * `mark` is the call's mark once seen. Output that does not start with it
 * (an `echo` the session redefined) passes unchanged, and no mark is known.
 */
export class CallLineFilter {
  mark: string | undefined;
  #held = "";
  #done = false;

  push(text: string): string {
    if (this.#done) return text;
    this.#held += text;
    const lines = this.#held.split("\n");
    const complete = lines.length - 1;
    for (let i = 0; i < Math.min(complete, MAX_LEADING_LINES + 1); i++) {
      const match = CALL_LINE_PATTERN.exec(lines[i]!);
      if (match === null) continue;
      this.mark = match[1];
      this.#done = true;
      this.#held = "";
      // The trace lines before it name the mark too.
      return [...lines.slice(0, i).filter((line) => !line.includes(CALL_LINE)), ...lines.slice(i + 1)].join("\n");
    }
    if (complete <= MAX_LEADING_LINES && this.#held.length < 4096) return "";
    return this.finish();
  }

  /** Whatever is still held (the call ended, or the mark's line is not coming). */
  finish(): string {
    if (this.#done) return "";
    this.#done = true;
    const held = this.#held;
    this.#held = "";
    return held;
  }
}

/** The session's output with the mark's line taken out of its start (the session keeps head and tail). */
export function withoutCallLine(output: string): string {
  const filter = new CallLineFilter();
  return filter.push(output) + filter.finish();
}
/** The output's last line after such a stop (in place of the interrupt's). */
export const STUCK_NOTICE = "[Command stopped: it was waiting for terminal input]";

/** What a stuck call's result says. */
export function stuckInputAdvice(stuck: StuckProcess, quietMs: number): string {
  return (
    `\`${stuck.name}\` (pid ${stuck.pid}) was waiting for input on a terminal that nothing here types into ` +
    `(an editor, a REPL, a prompt). After ${Math.round(quietMs / 1000)}s without output the command was stopped, ` +
    "with everything it started, as a timeout would. For an interactive program, use " +
    'terminal(command=..., background=true, pty=true) and type with process(action="submit"|"keys"); ' +
    'otherwise its non-interactive form: git commit -m "message" (or -F file, --no-edit), python3 -c "..." or a ' +
    "script file, input on stdin (printf 'y\\n' | cmd), or a --yes / --batch / --non-interactive flag."
  );
}

export interface StuckInputWatch {
  /** Runs an isolated probe in the session (Environment.execute with `isolated`). */
  probe(script: string): Promise<string>;
  /** The call's mark, once its command reported it (CallLineFilter). */
  mark(): string | undefined;
  /** When the call last printed (Date.now()). */
  lastOutputAt(): number;
  /** Output-free time before the first probe. */
  quietMs: number;
  /** Called once, with the process seen stuck by two probes in a row. */
  onStuck(stuck: StuckProcess): void;
}

/** After a sighting, the next probe (to see it again); without one, the wait doubles from this up to the cap. */
const REPEAT_MS = 1000;
const BACKOFF_CAP_MS = 30_000;

/**
 * Probes a call once it has been quiet for `quietMs`, one probe at a time: again after a second when a probe
 * found something, and less and less often while probes find nothing and the call stays quiet (a silent build
 * of ten minutes costs about 25 probes). A process seen by two probes in a row, with no output between them,
 * is reported (one sighting may be a program that reads its terminal between two bursts of work). Returns the
 * stop function.
 */
export function watchForStuckInput(watch: StuckInputWatch): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let seen = new Map<string, StuckProcess>();
  let seenAt = 0;
  let seenActivity = "";
  let backoff = REPEAT_MS;
  let quietSince = watch.lastOutputAt();
  const schedule = (ms: number): void => {
    timer = setTimeout(tick, Math.max(0, ms));
    timer.unref();
  };
  const tick = (): void => {
    if (stopped) return;
    const last = watch.lastOutputAt();
    if (last !== quietSince) {
      // It printed: start over.
      quietSince = last;
      backoff = REPEAT_MS;
      seen = new Map();
    }
    const quietFor = Date.now() - last;
    if (quietFor < watch.quietMs) return schedule(watch.quietMs - quietFor);
    const mark = watch.mark();
    if (mark === undefined) return schedule(BACKOFF_CAP_MS);
    const asked = Date.now();
    void watch
      .probe(stuckInputProbe(mark))
      .catch(() => "")
      .then((output) => {
        if (stopped) return;
        const found = new Map(parseStuck(output).map((p) => [`${p.pid}:${p.start}`, p]));
        const activity = parseActivity(output);
        // Seen again, with no output and nothing of the call done in between.
        const still = seenAt > watch.lastOutputAt() && activity === seenActivity;
        const again = still ? [...found].find(([key]) => seen.has(key)) : undefined;
        if (again !== undefined) {
          stopped = true;
          watch.onStuck(again[1]);
          return;
        }
        seen = found;
        seenAt = asked;
        seenActivity = activity;
        if (found.size > 0) return schedule(REPEAT_MS);
        schedule(backoff);
        backoff = Math.min(backoff * 2, BACKOFF_CAP_MS);
      });
  };
  schedule(watch.quietMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
