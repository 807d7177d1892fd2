/**
 * The channel's stderr of a call that keeps its stderr apart: the command's
 * own bytes, exactly, with the wrapper's keyed group and exit lines taken
 * out (command.ts, `keyed`). A line that looks like one but lacks the nonce
 * is the command's text and passes through.
 */

import { keyedPatterns } from "./command.js";

const PREFIX = "__SHELLWRIGHT_";
/** The longest a keyed line can be (the prefix, a word, a 24-digit nonce, a number): a longer tail is not one. */
const MAX_LINE = 80;

export class KeyedStderr {
  readonly #patterns: { group: RegExp; exit: RegExp };
  readonly #onLine: (kind: "group" | "exit", value: number) => void;
  #held = Buffer.alloc(0);

  constructor(nonce: string, onLine: (kind: "group" | "exit", value: number) => void) {
    this.#patterns = keyedPatterns(nonce);
    this.#onLine = onLine;
  }

  /** The command's bytes in `chunk` (and what was held back), without the keyed lines. */
  push(chunk: Buffer): Buffer {
    let data = this.#held.length > 0 ? Buffer.concat([this.#held, chunk]) : chunk;
    this.#held = Buffer.alloc(0);
    const out: Buffer[] = [];
    for (;;) {
      const text = data.toString("latin1"); // one char per byte: indexes match
      const group = this.#patterns.group.exec(text);
      const exit = this.#patterns.exit.exec(text);
      const first = group !== null && (exit === null || group.index <= exit.index) ? group : exit;
      if (first === null) break;
      out.push(data.subarray(0, first.index));
      data = data.subarray(first.index + first[0].length);
      this.#onLine(first === group ? "group" : "exit", Number(first[1]));
    }
    const keep = heldBack(data.toString("latin1"));
    this.#held = Buffer.from(data.subarray(data.length - keep));
    out.push(data.subarray(0, data.length - keep));
    return Buffer.concat(out);
  }

  flush(): Buffer {
    const rest = this.#held;
    this.#held = Buffer.alloc(0);
    return rest;
  }
}

/** How many trailing bytes may be the start of a keyed line still arriving. */
function heldBack(text: string): number {
  const at = text.lastIndexOf(PREFIX);
  // A newline before it may be the exit line's own (it starts with one).
  if (at >= 0 && text.length - at < MAX_LINE && !text.includes("\n", at))
    return text.length - at + (text[at - 1] === "\n" ? 1 : 0);
  for (let length = Math.min(PREFIX.length - 1, text.length); length > 0; length--)
    if (PREFIX.startsWith(text.slice(text.length - length)))
      return length + (text[text.length - length - 1] === "\n" ? 1 : 0);
  // A lone trailing newline is not held (a streamed line would arrive late): the exit line is one write.
  return 0;
}
