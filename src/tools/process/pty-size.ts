/**
 * A pseudo-terminal's size: its bounds, and the one check of a size given to
 * the library (spawn, resize, a foreground PTY call); the tools' schemas use
 * the same bounds. Below 2 columns the emulator cannot follow (xterm's least
 * width is 2, so a 1-column PTY would be drawn 2 wide); above 1000 a screen
 * is no longer something to read, and the emulator's buffers grow with
 * columns × rows (100 000 × 100 000 hung the owner).
 */

import { InvalidOptionError } from "../../core/errors.js";
import { describe } from "../../core/options.js";
import type { PtySize } from "./background-process.js";

export const PTY_COLS = { min: 2, max: 1000, default: 80 } as const;
export const PTY_ROWS = { min: 1, max: 1000, default: 24 } as const;

/** `size`, checked: whole numbers within the bounds, or an error naming the field and the value. */
export function checkPtySize(size: PtySize, option = "pty"): PtySize {
  if (typeof size !== "object" || size === null) {
    throw new InvalidOptionError(option, `${option} must be {cols, rows}, got ${describe(size)}`);
  }
  for (const [field, bounds] of [
    ["cols", PTY_COLS],
    ["rows", PTY_ROWS],
  ] as const) {
    const value: unknown = size[field];
    if (typeof value !== "number" || !Number.isInteger(value) || value < bounds.min || value > bounds.max) {
      throw new InvalidOptionError(
        `${option}.${field}`,
        `${option}.${field} must be a whole number from ${bounds.min} to ${bounds.max}, got ${describe(value)}`,
      );
    }
  }
  return { cols: size.cols, rows: size.rows };
}
