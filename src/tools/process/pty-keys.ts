/**
 * tmux's key names (as `send-keys` takes them) to the bytes an xterm sends,
 * for process(action="keys"). Models know these names from tmux; the bytes
 * are those of xterm in its normal (not application) cursor mode, which is
 * what readline, vim and curses programs accept in either mode.
 */

import { ProcessError } from "../../core/errors.js";

const NAMED: Readonly<Record<string, string>> = {
  Enter: "\r",
  Tab: "\t",
  BTab: "\x1b[Z",
  Space: " ",
  Escape: "\x1b",
  BSpace: "\x7f",
  Up: "\x1b[A",
  Down: "\x1b[B",
  Right: "\x1b[C",
  Left: "\x1b[D",
  Home: "\x1b[H",
  End: "\x1b[F",
  IC: "\x1b[2~",
  DC: "\x1b[3~",
  PageUp: "\x1b[5~",
  PageDown: "\x1b[6~",
  F1: "\x1bOP",
  F2: "\x1bOQ",
  F3: "\x1bOR",
  F4: "\x1bOS",
  F5: "\x1b[15~",
  F6: "\x1b[17~",
  F7: "\x1b[18~",
  F8: "\x1b[19~",
  F9: "\x1b[20~",
  F10: "\x1b[21~",
  F11: "\x1b[23~",
  F12: "\x1b[24~",
};

/** tmux's other spellings of the same keys. */
const ALIASES: Readonly<Record<string, string>> = {
  Return: "Enter",
  Esc: "Escape",
  Backspace: "BSpace",
  PPage: "PageUp",
  PgUp: "PageUp",
  NPage: "PageDown",
  PgDn: "PageDown",
  Insert: "IC",
  Delete: "DC",
  Del: "DC",
};

/** The key names `keys` accepts, for its description and its errors. */
export const KEY_NAMES = [...Object.keys(NAMED), ...Object.keys(ALIASES)];

/**
 * One key: a name above, `C-x` (Ctrl), `M-x` (Alt: ESC then the key), both
 * (`C-M-x`), or any other text, sent as is (as tmux sends an unknown name).
 */
export function keyBytes(key: string): string {
  if (key === "") throw new ProcessError('keys: an empty key name; give names such as "C-c", "Enter", "Up".');
  const named = NAMED[ALIASES[key] ?? key];
  if (named !== undefined) return named;
  const modified = /^((?:[CM]-)+)(.+)$/.exec(key);
  if (modified === null) return key;
  const [, prefixes, rest] = modified;
  let bytes = keyBytes(rest!);
  if (prefixes!.includes("C-")) bytes = control(bytes, key);
  if (prefixes!.includes("M-")) bytes = `\x1b${bytes}`;
  return bytes;
}

/** The bytes of every key in order. */
export const keysBytes = (keys: readonly string[]): string => keys.map(keyBytes).join("");

/** Ctrl of one character: C-a is 0x01, C-[ is ESC, C-? is DEL, C-Space is NUL. */
function control(bytes: string, key: string): string {
  if (bytes === " ") return "\x00";
  if (bytes === "?") return "\x7f";
  if (bytes.length === 1) {
    const code = bytes.toUpperCase().charCodeAt(0);
    if (code >= 0x40 && code <= 0x5f) return String.fromCharCode(code - 0x40);
  }
  throw new ProcessError(
    `keys: ${JSON.stringify(key)} has no Ctrl form; Ctrl applies to one letter or one of @[\\]^_ ? and Space.`,
  );
}
