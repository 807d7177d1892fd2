/**
 * Every request verb of the helper's protocol (protocol.ts), driven on the
 * binary itself, and what it does with requests that break the protocol:
 * unknown types, lengths out of bounds, numbers out of order, stdin longer
 * than its frame, an id run twice, a frame cut off by the channel's end, and
 * random bytes. The decoder on Node's side has its own property test
 * (test/backends/shared/fast-path/frames.test.ts); this is the C side's.
 */

import { existsSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { buildFastCallScript } from "../../src/core/fast-script.js";
import { shellQuote } from "../../src/core/quote.js";
import { HEADER_BYTES, HELPER_EXIT } from "../../src/backends/shared/fast-path/protocol.js";
import { decodeExit } from "../../src/backends/shared/fast-path/frames.js";
import type { FastCallEnd } from "../../src/core/transport.js";
import { alive, eventually } from "../helpers/processes.js";
import { noLocalHelper, skipAllUnless } from "../helpers/native-helper.js";
import { childrenOf, endHelpers, startReady, type Harness } from "../helpers/swmux-harness.js";

afterEach(endHelpers);

function job(command: string): string {
  return buildFastCallScript({ command, cwd: "/tmp", knownCwd: "/tmp", sessionCwd: true });
}

/** A header as a forger would write it: any type, length and number, and no valid tag. */
function rawHeader(type: string, id: number, length: number, seq: number): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header[0] = type.charCodeAt(0);
  header.writeUInt32BE(id, 1);
  header.writeUInt32BE(length, 5);
  header.writeUInt32BE(seq, 9);
  return header;
}

function ended(h: Harness, id: number): boolean {
  return h.frames.some((f) => f.type === "X" && f.id === id);
}

/** The exit frame's fields, decoded as the client decodes them. */
function exitOf(h: Harness, id: number): FastCallEnd {
  return decodeExit(h.frames.find((f) => f.type === "X" && f.id === id)!.payload);
}

function startedPid(h: Harness, id: number): number | undefined {
  return h.frames.find((f) => f.type === "S" && f.id === id)?.payload.readUInt32BE(0);
}

describe("swmux's requests", () => {
  skipAllUnless(noLocalHelper);
  it("K signals a running call's job group: its end says killed, and the job is gone", async () => {
    const h = await startReady();
    h.child.stdin.write(h.writer.run(3, job("sleep 30"), undefined));
    await eventually(() => startedPid(h, 3) !== undefined, "the call started");
    const pid = startedPid(h, 3)!;
    expect(alive(pid)).toBe(true);
    h.child.stdin.write(h.writer.frame("K", 3, Uint8Array.of(15)));
    await eventually(() => ended(h, 3), "the call's end");
    expect(exitOf(h, 3)).toMatchObject({ status: 143, committed: false, killed: true, started: true });
    await eventually(() => !alive(pid), "the job gone");
    expect(h.errors).toEqual([]);
  });

  it("K for an id that is not running changes nothing: the next requests are served", async () => {
    const h = await startReady();
    h.child.stdin.write(h.writer.frame("K", 99, Uint8Array.of(9)));
    h.child.stdin.write(h.writer.frame("P", 5));
    h.child.stdin.write(h.writer.run(6, job("echo still"), undefined));
    await eventually(() => ended(h, 6), "the call's end");
    expect(h.frames.find((f) => f.type === "P")!.id).toBe(5);
    expect(exitOf(h, 6)).toMatchObject({ status: 0, committed: true, killed: false });
    expect(h.child.exitCode).toBeNull();
  });

  it("X carries a committed call's cwd as its raw bytes, `%` and newline included", async () => {
    const h = await startReady();
    const dir = join(h.dir, "a%25b\nc d");
    h.child.stdin.write(h.writer.run(4, job(`mkdir -p ${shellQuote(dir)} && cd ${shellQuote(dir)}`), undefined));
    await eventually(() => ended(h, 4), "the call's end");
    expect(exitOf(h, 4)).toMatchObject({ status: 0, committed: true, cwd: dir });
  });

  it("R hands the job exactly the stdin it carries, any byte included", async () => {
    const h = await startReady();
    const stdin = Buffer.from([0x61, 0, 0xff, 0x0a, 0x62]);
    h.child.stdin.write(h.writer.run(8, job("od -An -tx1"), stdin));
    await eventually(() => ended(h, 8), "the call's end");
    const output = Buffer.concat(h.frames.filter((f) => f.type === "O" && f.id === 8).map((f) => f.payload));
    expect(output.toString().trim().split(/\s+/)).toEqual(["61", "00", "ff", "0a", "62"]);
  });

  it("Q ends the helper with code 0, and its launcher with it", async () => {
    const h = await startReady();
    const [launcher] = childrenOf(h.child.pid!);
    expect(launcher).toBeGreaterThan(0);
    h.child.stdin.write(h.writer.frame("Q", 0));
    expect(await h.exited).toBe(HELPER_EXIT.ok);
    await eventually(() => !alive(launcher!), "the launcher gone");
  });

  it.each([
    ["an unknown type", () => rawHeader("Z", 1, 0, 0), /unknown frame type 0x5a/],
    ["a length beyond its type's bound", () => rawHeader("K", 1, 2, 0), /a 'K' frame of 2 bytes \(1 to 1 allowed\)/],
    ["a number out of order", () => rawHeader("P", 1, 0, 5), /frame 5 where 0 was due/],
  ])("exits with the protocol code on %s, before reading its payload", async (_name, bytes, why) => {
    const h = await startReady();
    h.child.stdin.write(bytes());
    expect(await h.exited).toBe(HELPER_EXIT.protocol);
    expect(h.stderr()).toMatch(why);
  });

  it("exits with the protocol code on a run whose stdin is longer than its frame, running nothing", async () => {
    const h = await startReady();
    const mark = join(h.dir, "ran");
    const payload = Buffer.concat([Buffer.from([1, 0, 0, 0x10, 0]), Buffer.from(job(`touch ${mark}`))]);
    h.child.stdin.write(h.writer.frame("R", 4, payload));
    expect(await h.exited).toBe(HELPER_EXIT.protocol);
    expect(h.stderr()).toMatch(/call 4's stdin \(4096 bytes\) is longer than its frame/);
    expect(existsSync(mark)).toBe(false);
  });

  it("exits with the protocol code on a run of an id that is still running", async () => {
    const h = await startReady();
    h.child.stdin.write(h.writer.run(2, job("sleep 30"), undefined));
    await eventually(() => startedPid(h, 2) !== undefined, "the call started");
    const pid = startedPid(h, 2)!;
    h.child.stdin.write(h.writer.run(2, job("true"), undefined));
    expect(await h.exited).toBe(HELPER_EXIT.protocol);
    expect(h.stderr()).toMatch(/call 2 is already running/);
    process.kill(-pid, "SIGKILL");
  });

  it("never acts on a frame cut off by the channel's end", async () => {
    const h = await startReady();
    const mark = join(h.dir, "ran");
    const frame = h.writer.run(1, job(`touch ${mark}`), undefined);
    h.child.stdin.end(frame.subarray(0, frame.length - 1));
    expect(await h.exited).toBe(HELPER_EXIT.ok);
    expect(existsSync(mark)).toBe(false);
    // Only `H`, and `A` while the cut frame was arriving: nothing acted on.
    expect(h.frames.filter((f) => f.type !== "H" && f.type !== "A")).toEqual([]);
  });
});

describe("swmux's frame reader", () => {
  skipAllUnless(noLocalHelper);
  it("answers the same whatever the requests' bytes are cut into", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: 2 ** 32 - 1 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 }),
        async (ids, sizes) => {
          const h = await startReady();
          // Odd ones run `echo ID`, even ones ping.
          const bytes = Buffer.concat(
            ids.map((id) => (id % 2 === 1 ? h.writer.run(id, job(`echo ${id}`), undefined) : h.writer.frame("P", id))),
          );
          for (let at = 0, i = 0; at < bytes.length; i++) {
            const size = sizes[i % sizes.length]!;
            h.child.stdin.write(bytes.subarray(at, at + size));
            at += size;
            await new Promise((resolve) => setImmediate(resolve));
          }
          await eventually(
            () => ids.every((id) => h.frames.some((f) => f.id === id && (f.type === "P" || f.type === "X"))),
            "every request answered",
          );
          for (const id of ids.filter((n) => n % 2 === 1)) {
            const out = h.frames.filter((f) => f.type === "O" && f.id === id).map((f) => f.payload.toString());
            expect(out.join("")).toBe(`${id}\n`);
            expect(exitOf(h, id).status).toBe(0);
          }
          expect(h.frames.filter((f) => f.type === "P").map((f) => f.id)).toEqual(ids.filter((n) => n % 2 === 0));
          expect(h.errors).toEqual([]);
          endHelpers();
        },
      ),
      { numRuns: 12 },
    );
  });

  it("ends random bytes after a real frame with the protocol code or, when they stop short, quietly; never crashes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 80 }), async (junk) => {
        const h = await startReady();
        h.child.stdin.write(h.writer.frame("P", 1));
        h.child.stdin.end(Buffer.from(junk));
        const code = await h.exited;
        // A signal (a crash) would be null; a short header or payload waits for bytes that never come.
        expect([HELPER_EXIT.ok, HELPER_EXIT.protocol]).toContain(code);
        if (code === HELPER_EXIT.protocol) expect(h.stderr()).toMatch(/protocol violation/);
        else expect(junk.length).toBeLessThan(HEADER_BYTES);
        expect(h.frames.filter((f) => f.type === "X" || f.type === "S")).toEqual([]);
        endHelpers();
      }),
      { numRuns: 25 },
    );
  });
});
