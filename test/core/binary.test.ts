import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { looksBinary } from "../../src/core/binary.js";
import { OutputCollector } from "../../src/core/output.js";

describe("looksBinary: one rule for output and files", () => {
  it("calls text text: tabs and CRLF, UTF-8, Latin-1, colours, a printed U+FFFD", () => {
    expect(looksBinary(Buffer.from("plain text\n\twith tabs\r\n"))).toBe(false);
    expect(looksBinary(Buffer.from("naïve café ✓"))).toBe(false);
    expect(looksBinary(Buffer.from("caf\xe9 cr\xe8me br\xfbl\xe9e", "latin1"))).toBe(false);
    expect(looksBinary(Buffer.from("\x1b[31mred\x1b[0m \x1b[1mbold\x1b[0m\n"))).toBe(false);
    expect(looksBinary(Buffer.from("\ufffd\ufffd\ufffd"))).toBe(false);
  });

  it("calls NUL bytes, random bytes and control characters binary", () => {
    expect(looksBinary(Buffer.from([0x41, 0x00, 0x42]))).toBe(true);
    expect(looksBinary(randomBytes(4096))).toBe(true);
    expect(looksBinary(Buffer.from([1, 2, 3, 4, 65, 66]))).toBe(true);
  });

  it("is the rule a command's output is shown by: control characters are a binary notice there too", () => {
    const collector = new OutputCollector(1000, 0.5);
    collector.push(Buffer.from([1, 2, 3, 4, 65, 66]));
    expect(collector.finish().text).toBe("[binary output, 6 bytes]");
  });
});
