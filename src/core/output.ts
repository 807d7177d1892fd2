/**
 * Bounded output collection. However much a command prints, memory holds at
 * most a head and a tail of it (plus one pipe chunk); what was cut is said in
 * the text. Output is decoded as UTF-8 with U+FFFD for invalid bytes; only
 * output that really is binary (see binary.ts) becomes `[binary output, N bytes]`.
 */

import { looksBinary } from "./binary.js";

export interface CollectedOutput {
  text: string;
  truncated: boolean;
  totalBytes: number;
}

export class OutputCollector {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #head: Uint8Array[] = [];
  #headBytes = 0;
  readonly #tail: Uint8Array[] = [];
  #tailBytes = 0;
  #total = 0;

  /** @param maxBytes what is kept in all; @param headFraction the share of it kept from the start. */
  constructor(maxBytes: number, headFraction: number) {
    this.#headLimit = Math.floor(maxBytes * headFraction);
    this.#tailLimit = maxBytes - this.#headLimit;
  }

  get totalBytes(): number {
    return this.#total;
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headBytes < this.#headLimit) {
      const take = Math.min(this.#headLimit - this.#headBytes, rest.length);
      this.#head.push(rest.subarray(0, take));
      this.#headBytes += take;
      rest = rest.subarray(take);
      if (rest.length === 0) return;
    }
    this.#tail.push(rest);
    this.#tailBytes += rest.length;
    // Drop whole chunks the tail no longer needs; the first kept one may hold a little extra.
    while (this.#tail.length > 1 && this.#tailBytes - this.#tail[0]!.length >= this.#tailLimit) {
      this.#tailBytes -= this.#tail.shift()!.length;
    }
  }

  finish(): CollectedOutput {
    const head = Buffer.concat(this.#head);
    let tail = Buffer.concat(this.#tail);
    const kept = head.length + tail.length;
    if (kept <= this.#headLimit + this.#tailLimit && kept === this.#total) {
      const whole = Buffer.concat([head, tail]);
      const text = looksBinary(whole) ? binaryNotice(this.#total) : decodeUtf8(whole);
      return { text, truncated: false, totalBytes: this.#total };
    }
    tail = tail.subarray(tail.length - this.#tailLimit);
    const headBytes = head.subarray(0, completeUtf8Prefix(head));
    const tailBytes = tail.subarray(utf8Start(tail));
    if (looksBinary(Buffer.concat([headBytes, tailBytes]))) {
      return { text: binaryNotice(this.#total), truncated: true, totalBytes: this.#total };
    }
    // Bytes of a character cut in two count as omitted: they are not shown.
    const omitted = this.#total - headBytes.length - tailBytes.length;
    const text = decodeUtf8(headBytes) + truncationNotice(omitted, this.#total) + decodeUtf8(tailBytes);
    return { text, truncated: true, totalBytes: this.#total };
  }
}

/**
 * The one wording for a cut, wherever output is cut (the core, the terminal
 * tool): always in bytes of UTF-8, the unit the core collects in. `note` adds
 * where the whole output went.
 */
export function truncationNotice(omittedBytes: number, totalBytes: number, note?: string): string {
  const where = note === undefined ? "" : `. ${note}`;
  return `\n\n... [OUTPUT TRUNCATED - ${omittedBytes} bytes omitted out of ${totalBytes} total${where}] ...\n\n`;
}

export const binaryNotice = (bytes: number): string => `[binary output, ${bytes} bytes]`;

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** Decode UTF-8, each invalid sequence becoming U+FFFD (as a terminal shows it). */
export function decodeUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Length of the longest prefix that does not end inside a multi-byte character. */
export function completeUtf8Prefix(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** Offset of the first byte that does not continue a character cut off before the start. */
export function utf8Start(bytes: Uint8Array): number {
  let i = 0;
  while (i < Math.min(3, bytes.length) && (bytes[i]! & 0xc0) === 0x80) i++;
  return i;
}
