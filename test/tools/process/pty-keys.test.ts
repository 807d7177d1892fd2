/** tmux key names to the bytes an xterm sends (pty-keys.ts). */

import { describe, expect, it } from "vitest";
import { ProcessError } from "../../../src/core/errors.js";
import { keyBytes, keysBytes } from "../../../src/tools/process/pty-keys.js";

describe("pty key names", () => {
  it("maps tmux's names and their aliases", () => {
    expect(keysBytes(["Enter", "Tab", "Escape", "BSpace", "Space"])).toBe("\r\t\x1b\x7f ");
    expect(keysBytes(["Up", "Down", "Right", "Left", "Home", "End"])).toBe("\x1b[A\x1b[B\x1b[C\x1b[D\x1b[H\x1b[F");
    expect(keysBytes(["PageUp", "PPage", "PageDown", "NPage", "DC", "IC"])).toBe(
      "\x1b[5~\x1b[5~\x1b[6~\x1b[6~\x1b[3~\x1b[2~",
    );
    expect(keysBytes(["F1", "F4", "F5", "F12"])).toBe("\x1bOP\x1bOS\x1b[15~\x1b[24~");
  });

  it("Ctrl and Alt: C-c is ETX, C-d EOT, C-[ ESC, M-x ESC x, C-M-a ESC ^A, C-Space NUL", () => {
    for (const [given, wanted] of [
      ["C-c", "\x03"],
      ["C-C", "\x03"],
      ["C-d", "\x04"],
      ["C-[", "\x1b"],
      ["C-Space", "\x00"],
      ["M-x", "\x1bx"],
      ["C-M-a", "\x1b\x01"],
      ["M-Up", "\x1b\x1b[A"],
    ] as const)
      expect(keyBytes(given), given).toBe(wanted);
  });

  it("sends other text as is, as tmux does", () => {
    expect(keysBytes([":wq", "Enter"])).toBe(":wq\r");
    expect(keyBytes("C-")).toBe("C-");
  });

  it("refuses an empty name and a Ctrl form that does not exist, naming the key", () => {
    expect(() => keyBytes("")).toThrow(ProcessError);
    expect(() => keyBytes("C-Up")).toThrow(/"C-Up" has no Ctrl form/);
  });
});
