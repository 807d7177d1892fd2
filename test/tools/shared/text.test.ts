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
    expect(capture.text()).toBe("01234\n\n... [6 characters not kept in memory out of 16 total] ...\n\nbcdef");
    const small = new TextCapture(10);
    small.push("hello");
    expect(small.text()).toBe("hello");
  });

  it("strips ANSI sequences", () => {
    expect(stripAnsi("\x1b[1;32mok\x1b[0m \x1b]0;title\x07done\x1b[2K")).toBe("ok done");
  });
});
