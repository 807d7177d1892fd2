/** The stdio transport's line splitter: lines within the limit whole, an over-size one dropped as it arrives. */

import { describe, expect, it } from "vitest";
import { KEPT_EDGE_BYTES, LineSplitter, type OversizeLine } from "../../src/mcp/line-splitter.js";

function splitter(limit: number): { lines: string[]; oversize: OversizeLine[]; split: LineSplitter } {
  const lines: string[] = [];
  const oversize: OversizeLine[] = [];
  const split = new LineSplitter(
    limit,
    (line) => lines.push(line.toString()),
    (line) => oversize.push(line),
  );
  return { lines, oversize, split };
}

describe("LineSplitter", () => {
  it("gives each line whole, however the chunks cut it", () => {
    const { lines, split } = splitter(100);
    for (const chunk of ["ab", "c\nde", "f\n\ng", "hi\nj"]) split.push(Buffer.from(chunk));
    expect(lines).toEqual(["abc", "def", "", "ghi"]);
    expect(split.heldBytes).toBe(1);
  });

  it("takes a line of exactly the limit, and drops one a byte longer with its length and edges", () => {
    const { lines, oversize, split } = splitter(10);
    split.push(Buffer.from("0123456789\n0123456789A\nnext\n"));
    expect(lines).toEqual(["0123456789", "next"]);
    expect(oversize).toHaveLength(1);
    expect(oversize[0]!.bytes).toBe(11);
    expect(oversize[0]!.head.toString()).toBe("0123456789");
    expect(oversize[0]!.tail.toString()).toBe("0123456789A");
  });

  it("holds no more than the kept edges of a 64 MiB line sent in 64 KiB chunks, and reads the next line", () => {
    const { lines, oversize, split } = splitter(1024 * 1024);
    const chunk = Buffer.alloc(64 * 1024, "x");
    let most = 0;
    split.push(Buffer.from('{"start":'));
    for (let i = 0; i < 1024; i++) {
      split.push(chunk);
      most = Math.max(most, split.heldBytes);
    }
    split.push(Buffer.from(',"id":42}\n{"after":1}\n'));
    // Within the limit the line is held (up to 1 MiB); past it, only the edges.
    expect(most).toBeLessThanOrEqual(1024 * 1024);
    expect(split.heldBytes).toBe(0);
    expect(oversize).toHaveLength(1);
    expect(oversize[0]!.bytes).toBe(9 + 64 * 1024 * 1024 + 9);
    expect(oversize[0]!.head.toString().startsWith('{"start":xxx')).toBe(true);
    expect(oversize[0]!.tail.toString().endsWith('xxx,"id":42}')).toBe(true);
    expect(oversize[0]!.tail.length).toBe(KEPT_EDGE_BYTES);
    expect(lines).toEqual(['{"after":1}']);
  });

  it("while dropping, holds only the edges even when the line goes on for many more chunks", () => {
    const { split } = splitter(1000);
    split.push(Buffer.alloc(5000, "y"));
    expect(split.heldBytes).toBeLessThanOrEqual(1000 + KEPT_EDGE_BYTES);
    for (let i = 0; i < 100; i++) split.push(Buffer.alloc(100_000, "z"));
    expect(split.heldBytes).toBeLessThanOrEqual(1000 + KEPT_EDGE_BYTES);
  });
});
