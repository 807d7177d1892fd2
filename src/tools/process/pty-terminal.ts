/**
 * Node's side of one pseudo-terminal process: a real terminal emulator
 * (@xterm/headless) fed with everything the program prints, for `screen`,
 * and for answering the program's queries (cursor position ESC[6n, device
 * attributes): a program that asks and gets no answer hangs, so the
 * emulator's replies go back into the PTY as if typed.
 *
 * The output comes from one long command in the backend that follows the
 * process's log as it grows (see followScript), so `wait` with a pattern is
 * woken by the output itself, never by a timer.
 */

import { createRequire } from "node:module";
import type { Terminal } from "@xterm/headless";
import { EmulatorFeed } from "./emulator-feed.js";
import type { PatternWorker } from "./pattern-worker.js";
import { PtyTextStream, shownPtyText, TextTail } from "./pty-text.js";
import { screenRows, type SecretFinder } from "./screen-text.js";

/**
 * The emulator is loaded with the first PTY, not with the package: it is
 * most of what `import "shellwright"` would read from disk, and most
 * sessions never start a PTY (bench/cli-startup.mjs).
 */
let loadedTerminal: typeof Terminal | undefined;
function xtermTerminal(): typeof Terminal {
  loadedTerminal ??= (createRequire(import.meta.url)("@xterm/headless") as { Terminal: typeof Terminal }).Terminal;
  return loadedTerminal;
}

/** How much output since the last action is kept for `wait`'s answer (the newest part). */
const SINCE_ACTION_CHARS = 1_000_000;

export interface ScreenShot {
  /** The visible rows, right-trimmed, joined by `\n`. */
  screen: string;
  /** Zero-based, from the top-left of the visible screen. */
  cursor: { row: number; col: number };
  cols: number;
  rows: number;
}

export interface PatternWait {
  /** "matched", or why it stopped without a match. */
  status: "matched" | "timeout" | "ended" | "interrupted";
  /** The output since the previous action, without terminal control sequences. */
  output: string;
}

/** A pattern for `wait`: a JavaScript regular expression's source and flags (i, m and s count). */
export interface PatternSource {
  source: string;
  flags: string;
}

export class PtyTerminal {
  readonly #term: Terminal;
  readonly #emulator: EmulatorFeed;
  /** The output since the last action, as the program wrote it. */
  readonly #sinceAction = new TextTail(SINCE_ACTION_CHARS);
  #ended = false;
  /** Pending waits: each gets the output as it arrives, and the end. */
  readonly #listeners = new Set<{ output(raw: string): void; ended(): void }>();

  /** `reply` gets the emulator's answers to the program's queries, to be written to the PTY. */
  constructor(cols: number, rows: number, reply: (data: string) => void) {
    // logLevel off: the emulator would print a dump to the owner's stderr for every sequence it cannot
    // parse (random bytes gave 200 KB), which is the program's noise, not the owner's.
    this.#term = new (xtermTerminal())({ cols, rows, allowProposedApi: true, scrollback: 1000, logLevel: "off" });
    this.#term.onData(reply);
    this.#emulator = new EmulatorFeed(this.#term);
  }

  get cols(): number {
    return this.#term.cols;
  }
  get rows(): number {
    return this.#term.rows;
  }

  /** The program's output as it arrives. */
  feed(text: string): void {
    this.#emulator.write(text);
    this.#sinceAction.push(text);
    for (const listener of [...this.#listeners]) listener.output(text);
  }

  /** The follower ended: the program is gone, no more output will come. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const listener of [...this.#listeners]) listener.ended();
  }

  /** A new action starts: `wait`'s pattern looks only at what arrives from now on. */
  markAction(): void {
    this.#sinceAction.clear();
  }

  resize(cols: number, rows: number): void {
    this.#term.resize(cols, rows);
  }

  /** The visible screen, after every byte fed so far has been parsed; `find`'s secrets masked (screen-text.ts). */
  async screen(find?: SecretFinder): Promise<ScreenShot> {
    await this.#emulator.parsed();
    const buffer = this.#term.buffer.active;
    return {
      screen: screenRows(buffer, buffer.viewportY, this.#term.rows, find).join("\n"),
      cursor: { row: buffer.cursorY, col: buffer.cursorX },
      cols: this.#term.cols,
      rows: this.#term.rows,
    };
  }

  /**
   * Resolves as soon as the output since the previous action matches
   * `pattern`, or after `timeoutMs`, or when the program ends or `signal`
   * aborts. The pattern is matched on `worker`'s thread; one it cannot take
   * rejects with InvalidOptionError.
   */
  waitFor(
    pattern: PatternSource,
    timeoutMs: number,
    worker: PatternWorker,
    signal?: AbortSignal,
  ): Promise<PatternWait> {
    return new Promise((resolve, reject) => {
      const stream = new PtyTextStream();
      let watch: Awaited<ReturnType<PatternWorker["watch"]>> | undefined;
      let done = false;
      const early: string[] = [];
      const settle = (): void => {
        done = true;
        clearTimeout(timer);
        this.#listeners.delete(listener);
        signal?.removeEventListener("abort", onAbort);
        watch?.stop();
      };
      const finish = (status: PatternWait["status"]): void => {
        if (done) return;
        settle();
        resolve({ status, output: shownPtyText(this.#sinceAction.text()) });
      };
      const fail = (error: Error): void => {
        if (done) return;
        settle();
        reject(error);
      };
      const ended = (): void => {
        if (watch === undefined) return;
        const rest = stream.flush();
        if (rest !== "") watch.feed(rest);
        void watch.flush().then((matched) => finish(matched ? "matched" : "ended"));
      };
      const listener = {
        output: (raw: string): void => {
          const shown = stream.push(raw);
          if (shown === "") return;
          if (watch === undefined) early.push(shown);
          else watch.feed(shown);
        },
        ended,
      };
      const onAbort = (): void => finish("interrupted");
      // The timeout counts from the start, the pattern's compilation included.
      const timer = setTimeout(() => finish("timeout"), timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) return finish("interrupted");
      this.#listeners.add(listener);
      const before = stream.push(this.#sinceAction.text());
      worker
        .watch(pattern.source, pattern.flags, before, () => finish("matched"), fail)
        .then((started) => {
          if (done) return started.stop();
          watch = started;
          for (const shown of early.splice(0)) started.feed(shown);
          if (this.#ended) ended();
        }, fail);
    });
  }

  dispose(): void {
    this.end();
    this.#term.dispose();
  }
}

export { shownPtyText };
