import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OutputCollector } from "../../src/core/output.js";

function collect(chunks: (string | Uint8Array)[], max = 100, head = 0.4) {
  const collector = new OutputCollector(max, head);
  for (const chunk of chunks) collector.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return collector.finish();
}

describe("OutputCollector", () => {
  it("keeps short output whole", () => {
    expect(collect(["hello ", "world"])).toEqual({ text: "hello world", truncated: false, totalBytes: 11 });
  });

  it("keeps 40% head and 60% tail and says how much was cut", () => {
    const text = "H".repeat(50) + "x".repeat(1000) + "T".repeat(70);
    const result = collect([text], 100, 0.4);
    expect(result.truncated).toBe(true);
    expect(
      result.text.startsWith("H".repeat(40) + "\n\n... [OUTPUT TRUNCATED - 1020 bytes omitted out of 1120 total]"),
    ).toBe(true);
    expect(result.text.endsWith("\n\n" + "T".repeat(60))).toBe(true);
  });

  it("bounds what it holds however many chunks arrive", () => {
    const collector = new OutputCollector(1000, 0.4);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 2000; i++) collector.push(chunk);
    const result = collector.finish();
    expect(result.totalBytes).toBe(2000 * 64 * 1024);
    expect(result.text.length).toBeLessThan(1200);
  });

  it("turns invalid UTF-8 into a binary notice", () => {
    expect(collect([Uint8Array.from([0x61, 0xff, 0xfe])]).text).toBe("[binary output, 3 bytes]");
  });

  it("never splits a multi-byte character at a cut", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", minLength: 1, maxLength: 300 }),
        fc.integer({ min: 8, max: 60 }),
        (s, max) => {
          const result = collect([s], max);
          expect(result.text).not.toContain("[binary output");
          if (!result.truncated) expect(result.text).toBe(s);
        },
      ),
    );
  });
});
