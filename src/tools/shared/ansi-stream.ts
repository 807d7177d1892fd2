/**
 * stripAnsi for text that arrives in chunks. A tool's result has its colour
 * and cursor sequences removed before it is masked, so a secret printed in
 * two pieces around one (`printf "%s\033[0m%s"`) is whole again and masked;
 * the stream must be the same text, or it shows what the result hides. An
 * escape cut by a chunk boundary is held back until the next chunk finishes it.
 */

import { stripAnsi } from "./text.js";

/** The start of an escape that is not finished yet: ESC, a CSI without its final byte, an OSC without its end. */
// eslint-disable-next-line no-control-regex
const UNFINISHED = /\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?)?$/;
/** An unfinished escape longer than this is let through as text (nothing real is that long). */
const MAX_HELD_CHARS = 4096;

export class AnsiStream {
  #pending = "";

  /** What can be shown now, without escapes. */
  push(chunk: string): string {
    const text = this.#pending + chunk;
    // The leftmost escape still open at the end: the ESC that ends an OSC (ESC then a backslash) is not its start.
    const window = Math.max(0, text.length - MAX_HELD_CHARS);
    const open = text.includes("\x1b", window) ? UNFINISHED.exec(text.slice(window)) : null;
    const hold = open === null ? text.length : window + open.index;
    this.#pending = text.slice(hold);
    return stripAnsi(text.slice(0, hold));
  }

  /** The rest; the stream is over. */
  end(): string {
    const rest = this.#pending;
    this.#pending = "";
    return stripAnsi(rest);
  }
}
