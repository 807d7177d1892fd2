/**
 * Bounded output collection. However much a command prints, memory holds at
 * most a head and a tail of it (plus one pipe chunk); what was cut is said in
 * the text. Output that is not valid UTF-8 becomes `[binary output, N bytes]`.
 */

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
      const text = decodeUtf8(Buffer.concat([head, tail]));
      return { text: text ?? binaryNotice(this.#total), truncated: false, totalBytes: this.#total };
    }
    tail = tail.subarray(tail.length - this.#tailLimit);
    const headText = decodeUtf8(head.subarray(0, completeUtf8Prefix(head)));
    const tailText = decodeUtf8(tail.subarray(utf8Start(tail)));
    if (headText === undefined || tailText === undefined) {
      return { text: binaryNotice(this.#total), truncated: true, totalBytes: this.#total };
    }
    const omitted = this.#total - head.length - tail.length;
    const notice = `\n\n... [OUTPUT TRUNCATED - ${omitted} bytes omitted out of ${this.#total} total] ...\n\n`;
    return { text: headText + notice + tailText, truncated: true, totalBytes: this.#total };
  }
}

export const binaryNotice = (bytes: number): string => `[binary output, ${bytes} bytes]`;

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decode UTF-8, or undefined when the bytes are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Length of the longest prefix that does not end inside a multi-byte character. */
function completeUtf8Prefix(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** Offset of the first byte that does not continue a character cut off before the start. */
function utf8Start(bytes: Uint8Array): number {
  let i = 0;
  while (i < Math.min(3, bytes.length) && (bytes[i]! & 0xc0) === 0x80) i++;
  return i;
}
