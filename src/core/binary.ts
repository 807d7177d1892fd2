/**
 * Whether bytes are binary rather than text: one rule for a command's output
 * (shown as `[binary output, N bytes]`) and for a file the read tool opens.
 */

/**
 * Past this share of suspect bytes (invalid UTF-8, control characters), bytes
 * are called binary. Text in another encoding (a Latin-1 file name, a stray
 * byte) stays far below it: one invalid byte per accented letter. Random
 * bytes are about 60% invalid as UTF-8.
 */
export const BINARY_SUSPECT_FRACTION = 0.3;

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const REPLACEMENT = 0xfffd;
const ENCODED_REPLACEMENT = Buffer.from("\ufffd");

/** Control bytes text has: tab, LF, VT, FF, CR, and ESC (colours, cursor moves). */
function isTextControl(byte: number): boolean {
  return (byte >= 9 && byte <= 13) || byte === 27;
}

/** True for a NUL byte anywhere (no text has one), or when many bytes are invalid UTF-8 or control characters. */
export function looksBinary(bytes: Uint8Array): boolean {
  if (bytes.length === 0) return false;
  if (bytes.includes(0)) return true;
  let suspect = 0;
  for (const byte of bytes) if ((byte < 32 && !isTextControl(byte)) || byte === 127) suspect++;
  const text = decoder.decode(bytes);
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === REPLACEMENT) suspect++;
  if (suspect === 0) return false;
  // A U+FFFD the bytes themselves hold is text, not an invalid byte.
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  for (let at = buffer.indexOf(ENCODED_REPLACEMENT); at !== -1; at = buffer.indexOf(ENCODED_REPLACEMENT, at + 3)) {
    suspect--;
  }
  return suspect > bytes.length * BINARY_SUSPECT_FRACTION;
}
