/** The helper protocol's framing: any split of the byte stream gives back the same frames. */

import { describe, expect, it } from "vitest";
import { encodeFrame, encodeRun, FrameDecoder, type Frame } from "../../../../src/backends/shared/fast-path/frames.js";

function decodeIn(pieces: Buffer[]): Frame[] {
  const decoder = new FrameDecoder();
  const frames: Frame[] = [];
  for (const piece of pieces)
    decoder.push(piece, (frame) => frames.push({ ...frame, payload: Buffer.from(frame.payload) }));
  return frames;
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
    const frames = decodeIn(pieces);
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
