/**
 * How typed input is assembled into the lines the approval hook is asked
 * about (src/tools/process/typed-lines.ts): a terminal's line editing is
 * followed, escape sequences are dropped, a pipe takes the bytes as they are.
 */

import { describe, expect, it } from "vitest";
import { splitLines } from "../../../src/tools/process/typed-lines.js";

describe("splitLines", () => {
  it("on a terminal: CR or LF ends a line, DEL and ^H erase, ^W a word, ^U and ^C the line", () => {
    expect(splitLines("rm -r", "f /tmp/x\r", true)).toEqual({ lines: ["rm -rf /tmp/x"], rest: "" });
    expect(splitLines("", "echo ok\rrm -rX\x7ff y\n", true)).toEqual({ lines: ["echo ok", "rm -rf y"], rest: "" });
    expect(splitLines("", "ls abc\b\bd\r", true).lines).toEqual(["ls ad"]);
    expect(splitLines("", "rm -rf one two\x17\r", true).lines).toEqual(["rm -rf one "]);
    expect(splitLines("rm -rf /", "\x15echo fine\r", true).lines).toEqual(["echo fine"]);
    expect(splitLines("rm -rf /", "\x03", true)).toEqual({ lines: [], rest: "" });
  });

  it("on a terminal: escape sequences (arrows, F-keys, Alt) are dropped, the text around them kept", () => {
    expect(splitLines("", "\x1b[Arm\x1bOP -rf\x1b[1;5D x\x1bb\r", true).lines).toEqual(["rm -rf x"]);
    expect(splitLines("", "text\x1b[", true)).toEqual({ lines: [], rest: "text" });
  });

  it("on a pipe: only LF ends a line, and every byte counts", () => {
    expect(splitLines("", "a\rb\x7f\n", false)).toEqual({ lines: ["a\rb\x7f"], rest: "" });
    expect(splitLines("rm -rf ", "x\nmore", false)).toEqual({ lines: ["rm -rf x"], rest: "more" });
  });
});
