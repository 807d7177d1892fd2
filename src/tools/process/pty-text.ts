/**
 * A PTY's output as text, piece by piece: the newest part of it kept in
 * bounded memory (TextTail), and the conversion to what a model reads
 * (shownPtyText) done on each piece as it arrives, with what a piece cuts off
 * (an escape sequence, a `\r` before its `\n`) held for the next (PtyTextStream).
 */

import { ANSI } from "../shared/text.js";

/** The newest `limit` characters (about) of a stream of pieces, without copying the whole on each push. */
export class TextTail {
  readonly #limit: number;
  #pieces: string[] = [];
  #length = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get length(): number {
    return this.#length;
  }

  push(text: string): void {
    if (text === "") return;
    this.#pieces.push(text);
    this.#length += text.length;
    // Whole pieces go first; the last one that crosses the limit is cut when read.
    while (this.#pieces.length > 1 && this.#length - this.#pieces[0]!.length >= this.#limit) {
      this.#length -= this.#pieces.shift()!.length;
    }
  }

  clear(): void {
    this.#pieces = [];
    this.#length = 0;
  }

  /** The kept text, at most `limit` characters. */
  text(): string {
    const joined = this.#pieces.join("");
    this.#pieces = joined === "" ? [] : [joined];
    return joined.length > this.#limit ? joined.slice(joined.length - this.#limit) : joined;
  }
}

/** The longest an unfinished escape sequence may be held back (an OSC title or hyperlink is longer than a CSI). */
const MAX_HELD = 4096;

/**
 * The text from an ESC to the end is an escape sequence that more bytes may still finish: a lone ESC,
 * a CSI without its final byte, an OSC without its terminator, a charset designation without its
 * charset. Only these are held back: an ESC followed by what no sequence takes (random bytes) would
 * otherwise hold all later output until 4 KiB more came, and a wait for it would never see it.
 */
// eslint-disable-next-line no-control-regex
const UNFINISHED_ESCAPE = /^\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[()*+\-./])?$/;

/**
 * Converts a PTY's output to shown text piece by piece, with the same result
 * as shownPtyText on the whole: a piece that ends inside an escape sequence,
 * or on `\r` (maybe the first half of `\r\n`), keeps that end for the next.
 */
export class PtyTextStream {
  #held = "";
  /** The last text given ended a line: returns that open the next piece belong to that line end (`\n\r`). */
  #afterLineEnd = false;

  push(raw: string): string {
    let text = this.#held + raw;
    this.#held = "";
    if (this.#afterLineEnd) text = text.replace(/^\r+/, "");
    let escape = text.lastIndexOf("\x1b");
    // A final ESC may be the first half of an OSC's terminator (ESC and a backslash): then the OSC is what is unfinished.
    const before = escape === text.length - 1 ? text.lastIndexOf("\x1b", escape - 1) : -1;
    if (before >= 0 && UNFINISHED_ESCAPE.test(text.slice(before))) escape = before;
    if (escape >= 0 && text.length - escape < MAX_HELD && UNFINISHED_ESCAPE.test(text.slice(escape))) {
      this.#held = text.slice(escape);
      text = text.slice(0, escape);
    } else {
      let end = text.length;
      while (end > 0 && text.charCodeAt(end - 1) === 13) end--;
      if (end < text.length) {
        this.#held = text.slice(end);
        text = text.slice(0, end);
      }
    }
    const shown = shownPtyText(text);
    if (shown !== "") this.#afterLineEnd = shown.endsWith("\n");
    return shown;
  }

  /** What is held back, when no more output comes. */
  flush(): string {
    const held = this.#afterLineEnd ? this.#held.replace(/^\r+/, "") : this.#held;
    this.#held = "";
    return shownPtyText(held);
  }
}

/**
 * Every escape a terminal hides: stripAnsi's (CSI, OSC, two-character escapes) and what full-screen programs
 * send besides: charset designations (ESC ( B) and the one-character escapes of the keypad modes (ESC = and
 * ESC >), cursor save/restore (ESC 7, ESC 8) and reset (ESC c). One pass, left to right as a terminal reads:
 * removing one kind first could join an OSC with text after an escape inside it, and the result would then
 * depend on where the output was cut into pieces.
 */
const TERMINAL_ESCAPES = new RegExp(`${ANSI.source}|\\x1b[()*+\\-./][\\x20-\\x7e]|\\x1b[0-9:;<=>?\`a-z{|}~]`, "g");

/**
 * A terminal's output as a model reads it: no control sequences, and line ends
 * (`\r\n`, or readline's `\n\r`: a return at the start of a line moves
 * nothing) as `\n`.
 */
export function shownPtyText(text: string): string {
  const plain = text.includes("\x1b") ? text.replace(TERMINAL_ESCAPES, "") : text;
  return plain.replace(/\r*\n\r*/g, "\n");
}
