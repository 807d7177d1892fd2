/** Head + tail cuts and ANSI stripping shared by the tools. */

import { describe, expect, it } from "vitest";
import { cutHeadTail, stripAnsi, TextCapture } from "../../../src/tools/shared/text.js";

describe("text", () => {
  it("cuts head and tail with the notice between", () => {
    const cut = cutHeadTail("abcdefghij", 4, 0.5, (omitted, total) => `[${omitted}/${total}]`);
    expect(cut).toEqual({ text: "ab[6/10]ij", omitted: 6 });
    expect(cutHeadTail("abc", 4, 0.5, () => "!")).toEqual({ text: "abc", omitted: 0 });
  });

  it("never splits a surrogate pair", () => {
    const cut = cutHeadTail("a🙂b🙂c", 4, 0.5, () => "|");
    expect(Buffer.from(cut.text, "utf8").toString("utf8")).toBe(cut.text); // no lone surrogate
  });

  it("captures up to the limit, then head and tail with the count", () => {
    const capture = new TextCapture(10);
    for (const chunk of ["0123", "4567", "89ab", "cdef"]) capture.push(chunk);
    expect(capture.totalChars).toBe(16);
    expect(capture.text()).toBe(
      "01234\n\n... [OUTPUT TRUNCATED - 6 bytes omitted out of 16 total. The middle was not kept in memory] ...\n\nbcdef",
    );
    const small = new TextCapture(10);
    small.push("hello");
    expect(small.text()).toBe("hello");
  });

  it("counts what it did not keep in UTF-8 bytes, like the core", () => {
    const capture = new TextCapture(4);
    for (const chunk of ["ab", "é".repeat(10), "yz"]) capture.push(chunk);
    expect(capture.text()).toContain("[OUTPUT TRUNCATED - 20 bytes omitted out of 24 total.");
  });

  it("hands the notice the text it cuts out", () => {
    const seen: string[] = [];
    cutHeadTail("abcdefghij", 4, 0.5, (_o, _t, omittedText) => {
      seen.push(omittedText);
      return "|";
    });
    expect(seen).toEqual(["cdefgh"]);
  });

  it("strips ANSI sequences", () => {
    expect(stripAnsi("\x1b[1;32mok\x1b[0m \x1b]0;title\x07done\x1b[2K")).toBe("ok done");
  });
});
