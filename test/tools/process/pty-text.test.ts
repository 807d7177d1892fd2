import { randomBytes } from "node:crypto";
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

  it("holds back only an escape that more bytes may finish: text after a stray ESC comes at once", () => {
    // ESC followed by what no sequence takes (a program printing random bytes): the line after it is
    // shown without waiting for more output (a wait for FLOOD-END never matched; the MCP PTY test).
    const stream = new PtyTextStream();
    expect(stream.push("noise \x1b\u00e9 more\r\nFLOOD-END\r\n")).toContain("FLOOD-END\n");
    // A sequence cut in the middle is still held and finished by the next piece.
    for (const start of ["\x1b", "\x1b[1;3", "\x1b]0;title", "\x1b]0;title\x1b", "\x1b("]) {
      const cut = new PtyTextStream();
      expect(cut.push(`a${start}`), JSON.stringify(start)).toBe("a");
    }
    expect(new PtyTextStream().push("\x1b[1mA\x1b[0m\r\n")).toBe("A\n");
  });

  it("ends an OSC at the next escape, as a terminal does, wherever the output is cut", () => {
    // An OSC without its terminator, an ESC 1 inside it, the BEL only in the next piece: once, the ESC 1 was
    // removed first and the OSC then ran on to that BEL when read whole, but not when read in pieces.
    const raw = "a\x1b]title\x1b1 b|c\x07d";
    expect(shownPtyText(raw.replace("|", ""))).toBe("a bc\x07d");
    const stream = new PtyTextStream();
    const [first, second] = raw.split("|");
    expect(stream.push(first!) + stream.push(second!) + stream.flush()).toBe("a bc\x07d");
  });

  it("shows the last line of random bytes before the output ends, and the same text as on the whole", () => {
    for (let round = 0; round < 20; round++) {
      // The BEL ends an OSC the random bytes may have opened: a terminal, too, would take the rest for its title.
      const raw = `${randomBytes(100_000).toString("utf8")}\x07\r\nFLOOD-END\r\n`;
      const stream = new PtyTextStream();
      let shown = "";
      for (let at = 0; at < raw.length; at += 4096) shown += stream.push(raw.slice(at, at + 4096));
      expect(shown.endsWith("FLOOD-END\n"), `round ${round}`).toBe(true);
      expect(shown + stream.flush()).toBe(shownPtyText(raw));
    }
  });
});
