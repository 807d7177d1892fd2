/**
 * Bounded output of a call whose stdout and stderr arrive apart
 * (ExecuteOptions.separateStreams): one budget, `maxOutputBytes`, for both.
 * Each byte is held once, and the three texts a result gives (the merged
 * `output`, `stdout`, `stderr`) are all cut from the same kept bytes:
 *
 * - the head is the first `maxOutputBytes × headFraction` bytes of the call,
 *   whichever stream wrote them (as in a merged call);
 * - the tail is the rest of the budget, shared: each stream keeps at least
 *   half of it when both need more, and one may use what the other leaves
 *   (one error line beside a flood of stdout is kept whole).
 *
 * Every gap is said where it is, in bytes (a view may have more than one: a
 * stream's tail can start before the other's). A character cut by a gap is
 * dropped whole and counted in the gap.
 */

import { StringDecoder } from "node:string_decoder";
import { looksBinary } from "./binary.js";
import { binaryNotice, completeUtf8Prefix, truncationNotice, utf8Start, type CollectedOutput } from "./output.js";

export type StreamName = "stdout" | "stderr";
const STREAMS: readonly StreamName[] = ["stdout", "stderr"];

interface Piece {
  stream: StreamName;
  /** Offset of its first byte in the call's output, both streams counted in arrival order. */
  at: number;
  /** Offset of its first byte in its own stream. */
  own: number;
  bytes: Uint8Array;
}

export interface StreamsCollected {
  output: CollectedOutput;
  stdout: CollectedOutput;
  stderr: CollectedOutput;
}

export class StreamsCollector {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #head: Piece[] = [];
  #headBytes = 0;
  readonly #tails: Record<StreamName, Piece[]> = { stdout: [], stderr: [] };
  readonly #tailBytes: Record<StreamName, number> = { stdout: 0, stderr: 0 };
  readonly #totals: Record<StreamName, number> = { stdout: 0, stderr: 0 };
  #total = 0;

  constructor(maxBytes: number, headFraction: number) {
    this.#headLimit = Math.floor(maxBytes * headFraction);
    this.#tailLimit = maxBytes - this.#headLimit;
  }

  push(stream: StreamName, chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    let rest = chunk;
    let at = this.#total;
    let own = this.#totals[stream];
    this.#total += chunk.length;
    this.#totals[stream] += chunk.length;
    if (this.#headBytes < this.#headLimit) {
      const take = Math.min(this.#headLimit - this.#headBytes, rest.length);
      this.#head.push({ stream, at, own, bytes: rest.subarray(0, take) });
      this.#headBytes += take;
      rest = rest.subarray(take);
      at += take;
      own += take;
      if (rest.length === 0) return;
    }
    this.#tails[stream].push({ stream, at, own, bytes: rest });
    this.#tailBytes[stream] += rest.length;
    // Whole pieces go while what is left still holds the stream's share; finish() trims the last bit.
    const keep = this.#shares();
    for (const name of STREAMS) {
      const tail = this.#tails[name];
      while (tail.length > 1 && this.#tailBytes[name] - tail[0]!.bytes.length >= keep[name])
        this.#tailBytes[name] -= tail.shift()!.bytes.length;
    }
  }

  /**
   * What each stream's tail keeps: all of both when they fit; else a stream
   * that needs at most half keeps all it has and the other the rest; else
   * half each.
   */
  #shares(): Record<StreamName, number> {
    const { stdout, stderr } = this.#tailBytes;
    const limit = this.#tailLimit;
    if (stdout + stderr <= limit) return { stdout, stderr };
    const half = Math.floor(limit / 2);
    if (stdout <= half) return { stdout, stderr: limit - stdout };
    if (stderr <= half) return { stdout: limit - stderr, stderr };
    return { stdout: limit - half, stderr: half };
  }

  finish(): StreamsCollected {
    // Each tail to its share, cut from its front.
    const keep = this.#shares();
    for (const name of STREAMS) {
      const tail = this.#tails[name];
      while (this.#tailBytes[name] > keep[name]) {
        const oldest = tail[0]!;
        const cut = Math.min(this.#tailBytes[name] - keep[name], oldest.bytes.length);
        this.#tailBytes[name] -= cut;
        if (cut === oldest.bytes.length) tail.shift();
        else tail[0] = { ...oldest, at: oldest.at + cut, own: oldest.own + cut, bytes: oldest.bytes.subarray(cut) };
      }
    }
    const kept = [...this.#head, ...this.#tails.stdout, ...this.#tails.stderr].filter((p) => p.bytes.length > 0);
    const aligned = STREAMS.flatMap((stream) =>
      alignToCharacters(
        kept.filter((p) => p.stream === stream),
        this.#totals[stream],
      ),
    );
    aligned.sort((a, b) => a.at - b.at);
    return {
      output: render(aligned, this.#total, (p) => p.at),
      stdout: render(
        aligned.filter((p) => p.stream === "stdout"),
        this.#totals.stdout,
        (p) => p.own,
      ),
      stderr: render(
        aligned.filter((p) => p.stream === "stderr"),
        this.#totals.stderr,
        (p) => p.own,
      ),
    };
  }
}

/**
 * One stream's kept pieces with every gap on a character boundary: a
 * character cut by a gap (at its end, or a continuation at its start) is
 * dropped from the piece it is in, so it counts as omitted.
 */
function alignToCharacters(pieces: Piece[], total: number): Piece[] {
  pieces.sort((a, b) => a.own - b.own);
  const out: Piece[] = [];
  for (let i = 0; i < pieces.length; i++) {
    let piece = pieces[i]!;
    const before = out.at(-1);
    const gapBefore = before === undefined ? piece.own > 0 : before.own + before.bytes.length < piece.own;
    if (gapBefore) {
      const skip = utf8Start(piece.bytes);
      piece = { ...piece, at: piece.at + skip, own: piece.own + skip, bytes: piece.bytes.subarray(skip) };
    }
    const next = pieces[i + 1];
    const end = piece.own + piece.bytes.length;
    const gapAfter = next === undefined ? end < total : end < next.own;
    if (gapAfter) piece = { ...piece, bytes: piece.bytes.subarray(0, completeUtf8Prefix(piece.bytes)) };
    if (piece.bytes.length > 0) out.push(piece);
  }
  return out;
}

/** The text of `pieces` (in order, by `offset`), a notice in every gap; binary output as its notice. */
function render(pieces: Piece[], total: number, offset: (p: Piece) => number): CollectedOutput {
  const shown = pieces.reduce((sum, p) => sum + p.bytes.length, 0);
  const truncated = shown < total;
  if (looksBinary(Buffer.concat(pieces.map((p) => p.bytes))))
    return { text: binaryNotice(total), truncated, totalBytes: total };
  const decoders: Partial<Record<StreamName, StringDecoder>> = {};
  const ends: Partial<Record<StreamName, number>> = {};
  let text = "";
  let cursor = 0;
  for (const piece of pieces) {
    if (offset(piece) > cursor) text += truncationNotice(offset(piece) - cursor, total);
    // A gap in the piece's own stream ends what its decoder held (nothing: gaps are on character boundaries).
    if (ends[piece.stream] !== piece.own) decoders[piece.stream] = new StringDecoder("utf8");
    text += decoders[piece.stream]!.write(Buffer.from(piece.bytes.buffer, piece.bytes.byteOffset, piece.bytes.length));
    ends[piece.stream] = piece.own + piece.bytes.length;
    cursor = offset(piece) + piece.bytes.length;
  }
  for (const decoder of Object.values(decoders)) text += decoder.end();
  if (cursor < total) text += truncationNotice(total - cursor, total);
  return { text, truncated, totalBytes: total };
}
