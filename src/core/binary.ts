/**
 * Whether bytes are binary rather than text: one rule for a command's output
 * (shown as `[binary output, N bytes]`) and for a file the read tool opens.
 */

/**
 * Past this share of invalid UTF-8, bytes are called binary. Control
 * characters are text (a terminal prints them; a command may print any
 * string). Text in another encoding (a Latin-1 file name, a stray
 * byte) stays far below it: one invalid byte per accented letter. Random
 * bytes are about 60% invalid as UTF-8.
 */
export const BINARY_INVALID_FRACTION = 0.3;

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const REPLACEMENT = 0xfffd;
const ENCODED_REPLACEMENT = Buffer.from("\ufffd");

/** True for a NUL byte anywhere (no text has one), or for mostly invalid UTF-8. */
export function looksBinary(bytes: Uint8Array): boolean {
  if (bytes.length === 0) return false;
  if (bytes.includes(0)) return true;
  let replaced = 0;
  const text = decoder.decode(bytes);
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === REPLACEMENT) replaced++;
  if (replaced === 0) return false;
  // A U+FFFD the bytes themselves hold is text, not an invalid byte.
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  for (let at = buffer.indexOf(ENCODED_REPLACEMENT); at !== -1; at = buffer.indexOf(ENCODED_REPLACEMENT, at + 3)) {
    replaced--;
  }
  return replaced > bytes.length * BINARY_INVALID_FRACTION;
}
