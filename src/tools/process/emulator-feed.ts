/**
 * Feeds a PTY's output to its terminal emulator without letting a flood stall
 * the owner. xterm parses a whole write at once, so big writes are cut into
 * pieces it can yield between; and it parses slower than a program can print
 * (about 10 MB/s here), so while more than BACKLOG_CHARS wait to be parsed,
 * new output is held, only its newest HELD_CHARS kept, and fed once the
 * emulator caught up: after a flood the screen shows its end, as it would
 * have, without the owner parsing every screenful that scrolled by.
 */

import type xterm from "@xterm/headless";
import { TextTail } from "./pty-text.js";

const PIECE_CHARS = 16 * 1024;
const BACKLOG_CHARS = 2 * 1024 * 1024;
const HELD_CHARS = 256 * 1024;

export class EmulatorFeed {
  readonly #term: InstanceType<typeof xterm.Terminal>;
  /** Characters written to the emulator and not parsed yet. */
  #unparsed = 0;
  readonly #held = new TextTail(HELD_CHARS);
  /** Characters never parsed because a flood outran the emulator. */
  skippedChars = 0;

  constructor(term: InstanceType<typeof xterm.Terminal>) {
    this.#term = term;
  }

  write(text: string): void {
    if (this.#unparsed > BACKLOG_CHARS || this.#held.length > 0) {
      const before = this.#held.length;
      this.#held.push(text);
      this.skippedChars += Math.max(0, before + text.length - this.#held.length);
      return;
    }
    this.#write(text);
  }

  /** Resolves once everything written so far, held text included, is parsed. */
  async parsed(): Promise<void> {
    this.#release();
    await new Promise<void>((resolve) => this.#term.write("", resolve));
  }

  #write(text: string): void {
    for (let at = 0; at < text.length; at += PIECE_CHARS) {
      let end = Math.min(text.length, at + PIECE_CHARS);
      // Never between the halves of a surrogate pair.
      if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end++;
      const piece = text.slice(at, end);
      at = end - PIECE_CHARS;
      this.#unparsed += piece.length;
      this.#term.write(piece, () => {
        this.#unparsed -= piece.length;
        if (this.#unparsed <= BACKLOG_CHARS / 2) this.#release();
      });
    }
  }

  #release(): void {
    if (this.#held.length === 0) return;
    const text = this.#held.text();
    this.skippedChars += this.#held.length - text.length;
    this.#held.clear();
    this.#write(text);
  }
}
