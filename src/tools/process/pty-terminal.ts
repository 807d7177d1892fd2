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

import xterm from "@xterm/headless";
import { stripAnsi } from "../shared/text.js";
import { screenRows, type SecretFinder } from "./screen-text.js";

/** How much output since the last action is kept for `wait`'s pattern (the newest part). */
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

export class PtyTerminal {
  readonly #term: InstanceType<typeof xterm.Terminal>;
  #sinceAction = "";
  #ended = false;
  readonly #listeners = new Set<() => void>();

  /** `reply` gets the emulator's answers to the program's queries, to be written to the PTY. */
  constructor(cols: number, rows: number, reply: (data: string) => void) {
    // logLevel off: the emulator would print a dump to the owner's stderr for every sequence it cannot
    // parse (random bytes gave 200 KB), which is the program's noise, not the owner's.
    this.#term = new xterm.Terminal({ cols, rows, allowProposedApi: true, scrollback: 1000, logLevel: "off" });
    this.#term.onData(reply);
  }

  get cols(): number {
    return this.#term.cols;
  }
  get rows(): number {
    return this.#term.rows;
  }

  /** The program's output as it arrives. */
  feed(text: string): void {
    this.#term.write(text);
    this.#sinceAction = (this.#sinceAction + text).slice(-SINCE_ACTION_CHARS);
    this.#notify();
  }

  /** The follower ended: the program is gone, no more output will come. */
  end(): void {
    this.#ended = true;
    this.#notify();
  }

  /** A new action starts: `wait`'s pattern looks only at what arrives from now on. */
  markAction(): void {
    this.#sinceAction = "";
  }

  resize(cols: number, rows: number): void {
    this.#term.resize(cols, rows);
  }

  /** The visible screen, after every byte fed so far has been parsed; `find`'s secrets masked (screen-text.ts). */
  async screen(find?: SecretFinder): Promise<ScreenShot> {
    await new Promise<void>((resolve) => this.#term.write("", resolve));
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
   * `pattern`, or after `timeoutMs`, or when the program ends or `signal` aborts.
   */
  waitFor(pattern: RegExp, timeoutMs: number, signal?: AbortSignal): Promise<PatternWait> {
    return new Promise((resolve) => {
      const shown = (): string => shownPtyText(this.#sinceAction);
      const finish = (status: PatternWait["status"]): void => {
        clearTimeout(timer);
        this.#listeners.delete(check);
        signal?.removeEventListener("abort", onAbort);
        resolve({ status, output: shown() });
      };
      const check = (): void => {
        pattern.lastIndex = 0;
        if (pattern.test(shown())) finish("matched");
        else if (this.#ended) finish("ended");
      };
      const onAbort = (): void => finish("interrupted");
      const timer = setTimeout(() => finish("timeout"), timeoutMs);
      this.#listeners.add(check);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) finish("interrupted");
      else check();
    });
  }

  dispose(): void {
    this.end();
    this.#term.dispose();
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}

/**
 * What full-screen programs send besides CSI and OSC (stripAnsi's part):
 * charset designations (ESC ( B) and the one-character escapes of the keypad
 * modes (ESC = and ESC >), cursor save/restore (ESC 7, ESC 8) and reset (ESC c).
 */
// eslint-disable-next-line no-control-regex
const TERMINAL_ESCAPES = /\x1b[()*+\-./][\x20-\x7e]|\x1b[0-9:;<=>?`a-z{|}~]/g;

/** A terminal's output as a model reads it: no control sequences, and `\r\n` line ends as `\n`. */
export function shownPtyText(text: string): string {
  const plain = text.includes("\x1b") ? stripAnsi(text.replace(TERMINAL_ESCAPES, "")) : text;
  return plain.replace(/\r+\n/g, "\n");
}
