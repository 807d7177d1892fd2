/**
 * Text helpers shared by the tools: head + tail cuts (limits in characters,
 * notices in bytes like the core's, see truncationNotice), ANSI stripping.
 */

import { truncationNotice } from "../../core/output.js";

export interface Cut {
  text: string;
  /** Characters left out. */
  omitted: number;
}

/**
 * Keeps `headFraction` of `limit` characters from the start and the rest from
 * the end, with `notice(omitted, total, omittedText)` between them (counts in
 * characters). Never splits a surrogate pair.
 */
export function cutHeadTail(
  text: string,
  limit: number,
  headFraction: number,
  notice: (omitted: number, total: number, omittedText: string) => string,
): Cut {
  if (text.length <= limit) return { text, omitted: 0 };
  let head = Math.floor(limit * headFraction);
  let tailStart = text.length - (limit - head);
  if (head > 0 && isHighSurrogate(text.charCodeAt(head - 1))) head--;
  if (tailStart < text.length && isLowSurrogate(text.charCodeAt(tailStart))) tailStart++;
  const omitted = tailStart - head;
  const middle = notice(omitted, text.length, text.slice(head, tailStart));
  return { text: text.slice(0, head) + middle + text.slice(tailStart), omitted };
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

// CSI sequences, OSC sequences (ended by BEL or ST, or cut short by the next escape, as a terminal does), and
// two-character escapes.
// eslint-disable-next-line no-control-regex
export const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\|(?=\x1b))|\x1b[@-Z\\-_]/g;

/** Removes terminal colour and cursor sequences: they cost tokens and mean nothing to a model. */
export function stripAnsi(text: string): string {
  return text.includes("\x1b") ? text.replace(ANSI, "") : text;
}

/**
 * Collects streamed text up to `limit` characters; beyond it keeps the first
 * and last halves and counts (in UTF-8 bytes) what fell out, so memory stays
 * bounded however much a command prints.
 */
export class TextCapture {
  readonly #half: number;
  #head = "";
  #tail: string[] = [];
  #tailLength = 0;
  #total = 0;
  #totalBytes = 0;

  constructor(limit: number) {
    this.#half = Math.max(1, Math.floor(limit / 2));
  }

  get totalChars(): number {
    return this.#total;
  }

  push(text: string): void {
    this.#total += text.length;
    this.#totalBytes += Buffer.byteLength(text);
    if (this.#head.length < this.#half) {
      const take = this.#half - this.#head.length;
      this.#head += text.slice(0, take);
      text = text.slice(take);
      if (text === "") return;
    }
    this.#tail.push(text);
    this.#tailLength += text.length;
    while (this.#tail.length > 1 && this.#tailLength - this.#tail[0]!.length >= this.#half) {
      this.#tailLength -= this.#tail.shift()!.length;
    }
  }

  /** The captured text; when something was dropped, the cut is said in it. */
  text(): string {
    let tail = this.#tail.join("");
    const kept = this.#head.length + tail.length;
    if (kept === this.#total) return this.#head + tail;
    tail = tail.slice(tail.length - this.#half);
    const omitted = this.#totalBytes - Buffer.byteLength(this.#head) - Buffer.byteLength(tail);
    return this.#head + truncationNotice(omitted, this.#totalBytes, "The middle was not kept in memory") + tail;
  }
}
