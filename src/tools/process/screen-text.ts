/**
 * The visible rows of a terminal emulator's screen as text, with secrets
 * masked on each logical line. A line longer than the terminal is wide wraps
 * over several rows, and a secret printed on it is split between them: row by
 * row, no row holds the whole secret, so masking each row alone would show
 * it. The rows of one line (xterm marks each continuation row `isWrapped`) are
 * joined, the secrets found in the joined text, and each row masks its part,
 * as `keepLines` masking does across line breaks.
 */

import type xterm from "@xterm/headless";
import { REDACTED } from "../../core/redact.js";

type Buffer = InstanceType<typeof xterm.Terminal>["buffer"]["active"];
type Line = NonNullable<ReturnType<Buffer["getLine"]>>;

/** Finds the secrets of one logical line: [start, end) stretches of its text. */
export type SecretFinder = (text: string) => readonly (readonly [number, number])[];

/**
 * The rows `top` to `top + count - 1` of `buffer`, each right-trimmed, with
 * the secrets `find` finds on their logical lines replaced by REDACTED on each row
 * they touch.
 */
export function screenRows(buffer: Buffer, top: number, count: number, find?: SecretFinder): string[] {
  const rows: string[] = [];
  let y = top;
  // A logical line may start above the screen (in the scrollback): from its first row.
  while (y > 0 && buffer.getLine(y)?.isWrapped === true) y--;
  while (y < top + count) {
    let end = y + 1;
    while (buffer.getLine(end)?.isWrapped === true) end++;
    const texts: string[] = [];
    const blanks: number[] = [];
    for (let row = y; row < end; row++) {
      const { text, blankTail } = rowText(buffer.getLine(row), row < end - 1);
      texts.push(text);
      blanks.push(blankTail);
    }
    const masked = find === undefined ? texts : maskRows(texts, find);
    for (let row = y; row < end; row++)
      if (row >= top && row < top + count) rows.push(dropBlankTail(masked[row - y]!, blanks[row - y]!));
    y = end;
  }
  return rows;
}

/**
 * A row's text as the program printed it: a wide character once, an empty
 * cell as a space. A row the line continues from drops its trailing empty
 * cells (left empty when a wide character did not fit at the edge), which
 * are not part of the line.
 */
function rowText(line: Line | undefined, continues: boolean): { text: string; blankTail: number } {
  if (line === undefined) return { text: "", blankTail: 0 };
  const cells: string[] = [];
  for (let x = 0; x < line.length; x++) {
    const cell = line.getCell(x);
    if (cell === undefined || cell.getWidth() === 0) continue;
    cells.push(cell.getChars());
  }
  if (continues) while (cells.length > 0 && cells.at(-1) === "") cells.pop();
  let blankTail = 0;
  while (blankTail < cells.length && cells[cells.length - 1 - blankTail] === "") blankTail++;
  return { text: cells.map((chars) => (chars === "" ? " " : chars)).join(""), blankTail };
}

/**
 * A row without its trailing cells nothing was written to; a space the
 * program wrote stays (a prompt's `>>> `), as the emulator's own trim keeps it.
 */
function dropBlankTail(text: string, blankTail: number): string {
  const kept = text.length - blankTail;
  return blankTail > 0 && text.slice(kept).trim() === "" ? text.slice(0, kept) : text.trimEnd();
}

/** Each row with the parts of the secrets found in the rows' joined text masked. */
function maskRows(texts: readonly string[], find: SecretFinder): string[] {
  const ranges = find(texts.join(""));
  if (ranges.length === 0) return [...texts];
  let offset = 0;
  return texts.map((text) => {
    const start = offset;
    offset += text.length;
    let out = "";
    let at = 0;
    for (const [from, to] of ranges) {
      const a = Math.max(from, start) - start;
      const b = Math.min(to, offset) - start;
      if (b <= a || a < at) continue;
      out += text.slice(at, a) + REDACTED;
      at = b;
    }
    return out + text.slice(at);
  });
}
