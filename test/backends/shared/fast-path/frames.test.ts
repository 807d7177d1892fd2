/**
 * The helper protocol's framing on Node's side: any split of the byte stream
 * gives back the same frames, and a stream that is not the helper's (a
 * forged, dropped, reordered or unknown frame, a stray byte) is refused.
 */

import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeExit,
  encodeExit,
  FrameDecoder,
  FrameWriter,
  ProtocolViolation,
  type Frame,
} from "../../../../src/backends/shared/fast-path/frames.js";
import { FROM_HELPER, HEADER_BYTES } from "../../../../src/backends/shared/fast-path/protocol.js";

/** Decodes, joining an output frame's pieces back into one frame; also returns how many pieces each had. */
function decodeIn(key: Buffer, pieces: Buffer[]): { frames: Frame[]; outputPieces: number } {
  const decoder = new FrameDecoder(key);
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

function cut(stream: Buffer, size: number): Buffer[] {
  const pieces: Buffer[] = [];
  for (let i = 0; i < stream.length; i += size) pieces.push(stream.subarray(i, i + size));
  return pieces;
}

describe("frames", () => {
  const key = randomBytes(32);
  const big = Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 251));
  const helper = new FrameWriter(key, FROM_HELPER);
  const stream = Buffer.concat([
    helper.frame("H", 0),
    helper.frame("O", 7, big),
    helper.frame("X", 7, encodeExit({ status: 0, committed: true, text: "/tmp" })),
    helper.frame("S", 9, Buffer.from([0, 0, 1, 2])),
  ]);

  it.each([1, 5, 9, 21, 22, 4096, 65_536, stream.length])("decodes a stream cut every %i bytes", (size) => {
    const { frames, outputPieces } = decodeIn(key, cut(stream, size));
    // The output frame comes in as many pieces as the chunks it spans, never copied together.
    const start = 2 * HEADER_BYTES; // after the H frame and the O frame's header
    const end = start + big.length;
    expect(outputPieces).toBe(Math.floor((end - 1) / size) - Math.floor(start / size) + 1);
    expect(frames.map((f) => [f.type, f.id, f.payload.length])).toEqual([
      ["H", 0, 0],
      ["O", 7, big.length],
      ["X", 7, 7],
      ["S", 9, 4],
    ]);
    expect(frames[1]!.payload.equals(big)).toBe(true);
  });

  it("any split of any sequence of frames decodes to the same frames", () => {
    const type = fc.constantFrom("H", "B", "S", "O", "X", "P");
    const frameArb = fc.record({ type, id: fc.nat(), body: fc.uint8Array({ minLength: 1, maxLength: 300 }) });
    fc.assert(
      fc.property(fc.array(frameArb, { maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 64 })), (list, sizes) => {
        const writer = new FrameWriter(key, FROM_HELPER);
        const payloadOf = (f: { type: string; body: Uint8Array }): Buffer =>
          f.type === "S"
            ? Buffer.from(f.body.subarray(0, 4).length === 4 ? f.body.subarray(0, 4) : [0, 0, 0, 1])
            : f.type === "H" || f.type === "B" || f.type === "P"
              ? Buffer.alloc(0)
              : f.type === "X"
                ? encodeExit({ status: 0, text: Buffer.from(f.body).toString("hex") })
                : Buffer.from(f.body);
        const bytes = Buffer.concat(list.map((f) => writer.frame(f.type as "O", f.id, payloadOf(f))));
        const pieces: Buffer[] = [];
        let at = 0;
        for (let i = 0; at < bytes.length; i++) {
          const size = sizes.length === 0 ? bytes.length : sizes[i % sizes.length]!;
          pieces.push(bytes.subarray(at, at + size));
          at += size;
        }
        const { frames } = decodeIn(key, pieces);
        // Consecutive output frames of one id join in decodeIn: compare against the same joining.
        const expected: [string, number, string][] = [];
        for (const f of list) {
          const payload = payloadOf(f).toString("hex");
          const last = expected.at(-1);
          if (f.type === "O" && last?.[0] === "O" && last[1] === f.id) last[2] += payload;
          else expected.push([f.type, f.id, payload]);
        }
        expect(frames.map((f) => [f.type, f.id, f.payload.toString("hex")])).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  function refuses(bytes: Buffer, why: RegExp): void {
    expect(() => decodeIn(key, [bytes])).toThrow(ProtocolViolation);
    expect(() => decodeIn(key, [bytes])).toThrow(why);
  }

  it("refuses a frame forged without the key", () => {
    const forger = new FrameWriter(randomBytes(32), FROM_HELPER);
    refuses(forger.frame("X", 1, encodeExit({ status: 0, committed: true, text: "/etc" })), /wrong tag/);
  });

  it("refuses a changed payload, a dropped frame, a repeated one and one from the other direction", () => {
    const writer = new FrameWriter(key, FROM_HELPER);
    const first = writer.frame("X", 1, encodeExit({ status: 0, committed: true, text: "/tmp" }));
    const second = writer.frame("H", 0);
    const changed = Buffer.from(first);
    changed[changed.length - 1] = 0x78;
    refuses(changed, /wrong tag/);
    refuses(second, /frame 1 where 0 was due/);
    refuses(Buffer.concat([first, first]), /frame 0 where 1 was due/);
    refuses(new FrameWriter(key).frame("P", 0), /wrong tag/);
  });

  it("refuses an unknown type, an oversized frame and a stray byte before a real frame", () => {
    const unknown = new FrameWriter(key, FROM_HELPER).frame("Z" as "O", 1, Buffer.from("x"));
    refuses(unknown, /unknown frame type 0x5a/);
    const header = new FrameWriter(key, FROM_HELPER).frame("S", 1, Buffer.alloc(4));
    header.writeUInt32BE(5, 5);
    refuses(header, /'S' frame of 5 bytes/);
    refuses(Buffer.concat([Buffer.from("Z"), new FrameWriter(key, FROM_HELPER).frame("H", 0)]), /./);
  });
});

describe("the exit payload", () => {
  it("decodes each field once, the text raw: a committed call's cwd, an uncommitted one's reason", () => {
    const cwd = "/a b%25\nc";
    expect(decodeExit(encodeExit({ status: 3, committed: true, groupLeft: true, text: cwd }))).toEqual({
      status: 3,
      committed: true,
      killed: false,
      started: true,
      groupLeft: true,
      cwd,
    });
    expect(decodeExit(encodeExit({ status: 0, text: "size" }))).toMatchObject({
      committed: false,
      saveFailed: expect.stringContaining("64 MiB"),
    });
    expect(decodeExit(encodeExit({ status: 137, killed: true, started: "maybe" }))).toEqual({
      status: 137,
      committed: false,
      killed: true,
      started: false,
      uncertain: true,
      groupLeft: false,
    });
  });

  it("refuses flags and started values the protocol does not define", () => {
    const unknownFlag = encodeExit({ status: 0 });
    unknownFlag[1] = 0x80;
    expect(() => decodeExit(unknownFlag)).toThrow(ProtocolViolation);
    const unknownStarted = encodeExit({ status: 0 });
    unknownStarted[2] = 3;
    expect(() => decodeExit(unknownStarted)).toThrow(ProtocolViolation);
  });
});
