/** The helper's text mode on our side: frames to base64 lines and back, under any chunking. */

import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { FrameDecoder, FrameWriter, type Frame } from "../../../../src/backends/shared/fast-path/frames.js";
import { FROM_HELPER } from "../../../../src/backends/shared/fast-path/protocol.js";
import { framesToLines, linesToBytes } from "../../../../src/backends/shared/fast-path/text-frames.js";

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

describe("text frames", () => {
  const big = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 13) % 256));
  const key = randomBytes(32);
  const requests = new FrameWriter(key);
  const replies = new FrameWriter(key, FROM_HELPER);
  // What Node sends: the key first, then requests.
  const sent = [key, requests.frame("R", 1, Buffer.alloc(9)), requests.frame("K", 2, Uint8Array.of(9))];
  const bytes = Buffer.concat(sent);
  // What the helper sends.
  const frames = [replies.frame("S", 1, Buffer.alloc(4)), replies.frame("P", 2), replies.frame("O", 3, big)];

  it.each([1, 7, 9, 4096, bytes.length])(
    "sends the key and each frame as one base64 line, whatever the chunking (%i)",
    async (size) => {
      const encoder = framesToLines();
      const lines = collect(encoder);
      for (let i = 0; i < bytes.length; i += size) encoder.write(bytes.subarray(i, i + size));
      encoder.end();
      const text = (await lines).toString("latin1");
      expect(text.endsWith("\n")).toBe(true);
      expect(
        text
          .split("\n")
          .slice(0, -1)
          .map((line) => Buffer.from(line, "base64")),
      ).toEqual(sent);
    },
  );

  it.each([1, 5, 64, 100_000])("decodes the helper's lines back to the same frames (%i)", async (size) => {
    const text = Buffer.from(frames.map((frame) => `${frame.toString("base64")}\n`).join(""), "latin1");
    const decoder = linesToBytes();
    const source = new PassThrough();
    const out = collect(source.pipe(decoder));
    for (let i = 0; i < text.length; i += size) source.write(text.subarray(i, i + size));
    source.end();
    const decoded: Frame[] = [];
    new FrameDecoder(key).push(await out, (frame) => decoded.push({ ...frame, payload: Buffer.from(frame.payload) }));
    expect(decoded.map((frame) => [frame.type, frame.id])).toEqual([
      ["S", 1],
      ["P", 2],
      ["O", 3],
    ]);
    expect(decoded[2]!.payload.equals(big)).toBe(true);
  });
});
