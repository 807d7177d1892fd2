/** Escapes removed from a stream as stripAnsi removes them from the whole text, wherever the chunks are cut. */

import { describe, expect, it } from "vitest";
import { AnsiStream } from "../../../src/tools/shared/ansi-stream.js";
import { stripAnsi } from "../../../src/tools/shared/text.js";

const TEXTS = [
  "secret-\x1b[0mvalue\n",
  "a\x1b[1;31mred\x1b[0m b\x1b]0;title\x07c\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ d\x1bMe\n",
  "no escapes at all\n",
  "lone \x1b at the end \x1b",
];

describe("AnsiStream", () => {
  for (const text of TEXTS) {
    it(`gives stripAnsi's text for every cut of ${JSON.stringify(text)}`, () => {
      for (let cut = 0; cut <= text.length; cut++) {
        const stream = new AnsiStream();
        const shown = stream.push(text.slice(0, cut)) + stream.push(text.slice(cut)) + stream.end();
        expect(shown).toBe(stripAnsi(text));
      }
    });
  }

  it("holds back only an unfinished escape, and lets text through at once", () => {
    const stream = new AnsiStream();
    expect(stream.push("plain ")).toBe("plain ");
    expect(stream.push("x\x1b[3")).toBe("x");
    expect(stream.push("1mred")).toBe("red");
  });
});
