import { describe, expect, it } from "vitest";
import { PtyTextStream, shownPtyText } from "../../../src/tools/process/pty-text.js";

describe("PtyTextStream", () => {
  it("gives what shownPtyText gives on the whole, however the output is cut into pieces", () => {
    // Line ends both ways (`\r\n`, readline's `\n\r`), runs of returns, a progress bar, escapes.
    const samples = ["a\r\nb\n\rc\r\r\nd\n", "x\n\r\r\ry\r\n\r", "10%\r50%\r\n\x1b[1mA\x1b[0m\n\rB"];
    for (const sample of samples)
      for (let i = 0; i <= sample.length; i++)
        for (let j = i; j <= sample.length; j++) {
          const stream = new PtyTextStream();
          const pieces = [sample.slice(0, i), sample.slice(i, j), sample.slice(j)];
          const shown = pieces.map((piece) => stream.push(piece)).join("") + stream.flush();
          expect(shown, JSON.stringify([sample, i, j])).toBe(shownPtyText(sample));
        }
  });
});
