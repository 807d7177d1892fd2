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

  it("turns mostly invalid UTF-8 into a binary notice", () => {
    expect(collect([Uint8Array.from([0x61, 0xff, 0xfe])]).text).toBe("[binary output, 3 bytes]");
  });

  it("shows a stray invalid byte as U+FFFD and keeps the rest", () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `${i + 1}\n`).join("");
    const bytes = Buffer.concat([Buffer.from(lines), Buffer.from("bad byte: "), Buffer.from([0xe9, 0x0a])]);
    const result = collect([bytes], 1_000_000);
    expect(result.text).toBe(`${lines}bad byte: \ufffd\n`);
  });

  it("decodes Latin-1 text (one invalid byte per accented letter) instead of calling it binary", () => {
    expect(collect([Buffer.from("caf\xe9 cr\xe8me br\xfbl\xe9e\n", "latin1")]).text).toBe(
      "caf\ufffd cr\ufffdme br\ufffdl\ufffde\n",
    );
  });

  it("calls random bytes and anything with a NUL byte binary", () => {
    const random = Uint8Array.from({ length: 4096 }, (_, i) => (i * 2654435761) >>> 24);
    expect(collect([random], 1_000_000).text).toBe("[binary output, 4096 bytes]");
    expect(collect([Buffer.from("text\0more text\n")]).text).toBe("[binary output, 15 bytes]");
  });

  it("does not count a U+FFFD the output printed itself as invalid", () => {
    expect(collect(["\ufffd\ufffd\ufffd ok"]).text).toBe("\ufffd\ufffd\ufffd ok");
  });

  it("judges a cut output by what it keeps, and decodes each end with replacement", () => {
    const head = Buffer.from("ok \xe9 head " + "h".repeat(20), "latin1");
    const tail = Buffer.from("t".repeat(30) + " tail \xe9\n", "latin1");
    const result = collect([head, Buffer.alloc(1000, 0xff), tail], 60, 0.4);
    expect(result.truncated).toBe(true);
    expect(result.text).toMatch(
      /^ok \ufffd head h+\n\n\.\.\. \[OUTPUT TRUNCATED - 1008 bytes omitted out of 1068 total\]/,
    );
    expect(result.text).toMatch(/t+ tail \ufffd\n$/);
    expect(collect([Buffer.alloc(1000, 0xff)], 60).text).toBe("[binary output, 1000 bytes]");
  });

  it("never splits a multi-byte character at a cut", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", minLength: 1, maxLength: 300 }),
        fc.integer({ min: 8, max: 60 }),
        (s, max) => {
          const result = collect([s], max);
          expect(result.text).not.toContain("[binary output");
          if (!s.includes("\ufffd")) expect(result.text).not.toContain("\ufffd");
          if (!result.truncated) expect(result.text).toBe(s);
        },
      ),
    );
  });
});
