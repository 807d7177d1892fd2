/**
 * Splits a byte stream into newline-terminated lines without ever holding
 * more than `maxLineBytes` of one line. A line that grows past the limit is
 * dropped as it arrives: only its first and last few KiB are kept (where a
 * JSON-RPC request's id is, see request-id.ts) and its length is counted, so
 * a client that sends a gigabyte on one line costs this process a few KiB.
 */

/** How much of an over-size line's start and end is kept. */
export const KEPT_EDGE_BYTES = 4096;

export interface OversizeLine {
  /** The line's length in bytes, without its newline. */
  bytes: number;
  /** Its first KEPT_EDGE_BYTES bytes (fewer if the limit is lower). */
  head: Buffer;
  /** Its last KEPT_EDGE_BYTES bytes. */
  tail: Buffer;
}

const NEWLINE = 0x0a;

export class LineSplitter {
  readonly #maxLineBytes: number;
  readonly #onLine: (line: Buffer) => void;
  readonly #onOversize: (line: OversizeLine) => void;
  /** Pieces of the line being read, while it is within the limit. */
  #parts: Buffer[] = [];
  #partBytes = 0;
  /** Set while an over-size line is being dropped. */
  #dropping: OversizeLine | undefined;

  constructor(maxLineBytes: number, onLine: (line: Buffer) => void, onOversize: (line: OversizeLine) => void) {
    this.#maxLineBytes = maxLineBytes;
    this.#onLine = onLine;
    this.#onOversize = onOversize;
  }

  /** Bytes of the current line held in memory (never more than the limit, plus the kept edges while dropping). */
  get heldBytes(): number {
    return this.#dropping === undefined ? this.#partBytes : this.#dropping.head.length + this.#dropping.tail.length;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.#take(chunk.subarray(start, end));
      if (newline === -1) return;
      this.#finishLine();
      start = newline + 1;
    }
  }

  /** Forgets a line left unfinished (the stream ended or the transport closed). */
  reset(): void {
    this.#parts = [];
    this.#partBytes = 0;
    this.#dropping = undefined;
  }

  #take(piece: Buffer): void {
    if (piece.length === 0) return;
    const dropping = this.#dropping;
    if (dropping !== undefined) {
      dropping.bytes += piece.length;
      dropping.tail = lastBytes([dropping.tail, piece]);
      return;
    }
    if (this.#partBytes + piece.length <= this.#maxLineBytes) {
      this.#parts.push(piece);
      this.#partBytes += piece.length;
      return;
    }
    // Over the limit: keep the edges, let go of the rest now.
    const all = [...this.#parts, piece];
    this.#dropping = {
      bytes: this.#partBytes + piece.length,
      head: firstBytes(all, Math.min(KEPT_EDGE_BYTES, this.#maxLineBytes)),
      tail: lastBytes(all),
    };
    this.#parts = [];
    this.#partBytes = 0;
  }

  #finishLine(): void {
    const dropping = this.#dropping;
    if (dropping !== undefined) {
      this.#dropping = undefined;
      this.#onOversize(dropping);
      return;
    }
    const line = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#partBytes);
    this.#parts = [];
    this.#partBytes = 0;
    this.#onLine(line);
  }
}

/** A copy (never a view that keeps a large chunk alive) of the first `count` bytes of `parts`. */
function firstBytes(parts: readonly Buffer[], count: number): Buffer {
  const out: Buffer[] = [];
  let have = 0;
  for (const part of parts) {
    if (have >= count) break;
    const piece = part.subarray(0, count - have);
    out.push(piece);
    have += piece.length;
  }
  return Buffer.from(Buffer.concat(out, have));
}

/** A copy of the last KEPT_EDGE_BYTES bytes of `parts`. */
function lastBytes(parts: readonly Buffer[]): Buffer {
  const out: Buffer[] = [];
  let have = 0;
  for (let i = parts.length - 1; i >= 0 && have < KEPT_EDGE_BYTES; i--) {
    const part = parts[i]!;
    const piece = part.subarray(Math.max(0, part.length - (KEPT_EDGE_BYTES - have)));
    out.unshift(piece);
    have += piece.length;
  }
  return Buffer.from(Buffer.concat(out, have));
}
