/** The helper protocol's framing: any split of the byte stream gives back the same frames. */

import { describe, expect, it } from "vitest";
import {
  encodeFrame,
  encodeRun,
  FrameDecoder,
  HEADER_BYTES,
  type Frame,
} from "../../../../src/backends/shared/fast-path/frames.js";

/** Decodes, joining an output frame's pieces back into one frame; also returns how many pieces each had. */
function decodeIn(pieces: Buffer[]): { frames: Frame[]; outputPieces: number } {
  const decoder = new FrameDecoder();
  // Each frame's payload pieces, joined once at the end (joining per piece is quadratic).
  const frames: { frame: Frame; parts: Uint8Array[] }[] = [];
  let outputPieces = 0;
  let joining = false;
  for (const piece of pieces)
    decoder.push(piece, (frame) => {
      const last = frames.at(-1)?.frame;
      if (frame.type === "O") outputPieces++;
      // A copy: the decoder's payloads are views of chunks that are not ours to keep.
      const part = Buffer.from(frame.payload);
      if (frame.type === "O" && joining && last?.type === "O" && last.id === frame.id) frames.at(-1)!.parts.push(part);
      else frames.push({ frame, parts: [part] });
      joining = frame.type === "O";
    });
  return { frames: frames.map(({ frame, parts }) => ({ ...frame, payload: Buffer.concat(parts) })), outputPieces };
}

describe("frames", () => {
  const big = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
  const stream = Buffer.concat([
    encodeFrame("H", 0),
    encodeFrame("O", 7, big),
    encodeFrame("X", 7, Buffer.from("0 1 0 1 /tmp")),
    encodeRun(9, "echo hi", Buffer.from([0, 1, 255])),
  ]);

  it.each([1, 5, 9, 10, 4096, 65_536, stream.length])("decodes a stream cut every %i bytes", (size) => {
    const pieces: Buffer[] = [];
    for (let i = 0; i < stream.length; i += size) pieces.push(stream.subarray(i, i + size));
    const { frames, outputPieces } = decodeIn(pieces);
    // The output frame comes in as many pieces as the chunks it spans, never copied together.
    const start = 2 * HEADER_BYTES; // after the H frame and the O frame's header
    const end = start + big.length;
    expect(outputPieces).toBe(Math.floor((end - 1) / size) - Math.floor(start / size) + 1);
    expect(frames.map((f) => [f.type, f.id, f.payload.length])).toEqual([
      ["H", 0, 0],
      ["O", 7, big.length],
      ["X", 7, 12],
      ["R", 9, 5 + 3 + 7],
    ]);
    expect(frames[1]!.payload.equals(big)).toBe(true);
    expect(frames[3]!.payload.subarray(5, 8)).toEqual(Buffer.from([0, 1, 255]));
  });
});
