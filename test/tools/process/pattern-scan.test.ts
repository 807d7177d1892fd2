/**
 * The pattern worker's program (pattern-scan.ts) run in this thread with small
 * windows, so every cut is exercised: a match across pieces and across window
 * cuts, ^ and $ at line ends only, a lone \r as a line end, the backlog
 * skipped oldest first, flush at the end, and patterns RE2 refuses.
 */

import * as re2 from "re2js";
import { describe, expect, it } from "vitest";
import { patternWorkerMain, type ScanReply, type ScanRequest } from "../../../src/tools/process/pattern-scan.js";

const LIMITS = { overlapChars: 16, sliceChars: 32, backlogChars: 10_000, trickleIntervalMs: 0 };

function worker(limits = LIMITS) {
  let listener: ((message: ScanRequest) => void) | undefined;
  const replies: ScanReply[] = [];
  patternWorkerMain(
    { on: (_event, l) => (listener = l), postMessage: (reply) => replies.push(reply) },
    re2 as never,
    limits,
  );
  const send = (message: ScanRequest): void => listener!(message);
  /** Lets the worker's scheduled scans run. */
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  const matched = (id: number): boolean => replies.some((r) => r.type === "matched" && r.id === id);
  return { send, settle, replies, matched };
}

describe("pattern worker program", () => {
  it("finds a match split over many small pieces and over window cuts", async () => {
    const w = worker();
    w.send({ type: "add", id: 1, source: "READY-\\d+-END", flags: "m", text: "" });
    const text = `${"x".repeat(30)}\n${"y".repeat(40)}\nstart READY-12345-END tail\n`;
    for (const ch of text) w.send({ type: "data", id: 1, text: ch });
    await w.settle();
    expect(w.matched(1)).toBe(true);
  });

  it("matches what was there when the wait began, at once", () => {
    const w = worker();
    w.send({ type: "add", id: 7, source: ">>> $", flags: "m", text: "Python 3\n>>> " });
    expect(w.replies).toEqual([
      { type: "added", id: 7 },
      { type: "matched", id: 7 },
    ]);
  });

  it("^ and $ hold at real line ends only, also where a window was cut", async () => {
    const w = worker();
    // Lines of 20 characters: windows are cut before a \n, never inside a line.
    w.send({ type: "add", id: 1, source: "^z+$", flags: "m", text: "" });
    const lines = Array.from({ length: 20 }, () => `${"a".repeat(10)}${"z".repeat(9)}`);
    w.send({ type: "data", id: 1, text: lines.join("\n") + "\n" });
    w.send({ type: "flush", id: 1 });
    await w.settle();
    expect(w.matched(1)).toBe(false);
    expect(w.replies.at(-1)).toEqual({ type: "flushed", id: 1, skippedChars: 0 });
    // The same stream with one line of z alone in its middle.
    lines[13] = "z".repeat(19);
    w.send({ type: "add", id: 2, source: "^z+$", flags: "m", text: "" });
    w.send({ type: "data", id: 2, text: lines.join("\n") + "\n" });
    w.send({ type: "flush", id: 2 });
    expect(w.matched(2)).toBe(true);
  });

  it("takes a lone \\r for a line end (a prompt redrawn after a progress bar)", async () => {
    const w = worker();
    w.send({ type: "add", id: 1, source: "^\\$ $", flags: "m", text: "" });
    w.send({ type: "data", id: 1, text: "50%\r100%\r$ " });
    await w.settle();
    expect(w.matched(1)).toBe(true);
  });

  it("skips the oldest of a backlog beyond its bound and says how much at the flush", () => {
    const w = worker({ ...LIMITS, sliceChars: 1000, backlogChars: 100 });
    w.send({ type: "add", id: 1, source: "OLD|NEVER", flags: "m", text: "" });
    w.send({ type: "data", id: 1, text: "OLD" + "-".repeat(300) });
    w.send({ type: "flush", id: 1 });
    expect(w.replies.at(-1)).toEqual({ type: "flushed", id: 1, skippedChars: 203 });
  });

  it("a pattern that backtracks exponentially in JavaScript is matched at once", () => {
    const w = worker({ ...LIMITS, sliceChars: 4096 });
    w.send({ type: "add", id: 1, source: "(a+)+$", flags: "m", text: `${"a".repeat(48)}b\n` });
    w.send({ type: "add", id: 2, source: "(x+x+)+y", flags: "m", text: "x".repeat(40) });
    w.send({ type: "flush", id: 1 });
    w.send({ type: "flush", id: 2 });
    expect(w.replies.filter((r) => r.type === "flushed").map((r) => r.id)).toEqual([1, 2]);
  });

  it("refuses lookahead and backreferences with RE2's reason; i and s flags count", () => {
    const w = worker();
    w.send({ type: "add", id: 1, source: "(?=x)y", flags: "m", text: "" });
    w.send({ type: "add", id: 2, source: "(a)\\1", flags: "m", text: "" });
    w.send({ type: "add", id: 3, source: "done.next", flags: "is", text: "DONE\nnext" });
    expect(w.replies[0]).toMatchObject({ type: "added", id: 1, error: expect.stringMatching(/\(\?=/) });
    expect(w.replies[1]).toMatchObject({ type: "added", id: 2, error: expect.stringMatching(/\\1/) });
    expect(w.replies.slice(2)).toEqual([
      { type: "added", id: 3 },
      { type: "matched", id: 3 },
    ]);
  });

  it("a dropped watch gets no more answers", async () => {
    const w = worker();
    w.send({ type: "add", id: 1, source: "hit", flags: "m", text: "" });
    w.send({ type: "drop", id: 1 });
    w.send({ type: "data", id: 1, text: "hit" });
    w.send({ type: "flush", id: 1 });
    await w.settle();
    expect(w.replies).toEqual([{ type: "added", id: 1 }]);
  });
});
