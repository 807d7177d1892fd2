/**
 * screenRows (src/tools/process/screen-text.ts) on a real emulator: secrets
 * are found on the logical line, whatever rows it wraps over, also where a
 * wide character that did not fit left an empty cell at a row's end, and
 * where the line began above the visible screen.
 */

import xterm from "@xterm/headless";
import { describe, expect, it } from "vitest";
import { Redactor } from "../../../src/core/redact.js";
import { screenRows } from "../../../src/tools/process/screen-text.js";

const SECRET = "9漢Qz7pW3xK9mLr";
const redactor = new Redactor([SECRET, "Qz7pW3xK9mLr2Vt8"]);
const find = (text: string) => redactor.maskedRanges(text);

async function terminal(cols: number, rows: number, text: string) {
  const term = new xterm.Terminal({ cols, rows, allowProposedApi: true, logLevel: "off" });
  await new Promise<void>((resolve) => term.write(text, resolve));
  return term;
}

describe("screenRows", () => {
  it("masks a secret across a wide character's wrap, where the row above ends in an empty cell", async () => {
    // "123456789" fills 9 columns; 漢 (2 columns) does not fit in the 10th and starts the next row.
    const term = await terminal(10, 4, `12345678${SECRET}\r\nnext`);
    const buffer = term.buffer.active;
    expect(screenRows(buffer, 0, 4)).toEqual(["123456789", "漢Qz7pW3xK", "9mLr", "next"]);
    expect(screenRows(buffer, 0, 4, find)).toEqual(["12345678[REDACTED]", "[REDACTED]", "[REDACTED]", "next"]);
    term.dispose();
  });

  it("masks the visible rows of a line that began above the screen", async () => {
    // The secret's line wraps over rows 1 and 2; after two more lines only its second row is visible.
    const term = await terminal(10, 3, "top\r\nkey=Qz7pW3xK9mLr2Vt8\r\na\r\nb");
    const buffer = term.buffer.active;
    expect(screenRows(buffer, buffer.viewportY, 3)).toEqual(["xK9mLr2Vt8", "a", "b"]);
    expect(screenRows(buffer, buffer.viewportY, 3, find)).toEqual(["[REDACTED]", "a", "b"]);
    term.dispose();
  });
});
