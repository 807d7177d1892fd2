/**
 * The gateway's own bearer token, masked in everything a session sends back
 * (result, streamed output, error message). Whoever holds the token can run
 * commands through the server, so no command may hand it out: not a file a
 * sandbox failed to hide, not a value some other way leaked into the
 * session. Only the token itself: `execute()` over the gateway stays raw
 * otherwise, as it is on every backend (the tools mask the rest).
 */

import { REDACTED } from "../core/redact.js";

export class TokenMask {
  readonly #token: string;

  constructor(token: string) {
    this.#token = token;
  }

  mask(text: string): string {
    return text.includes(this.#token) ? text.replaceAll(this.#token, REDACTED) : text;
  }

  /** A masker for text in chunks: a trailing start of the token waits for the next chunk. */
  stream(): { push(chunk: string): string; end(): string } {
    let pending = "";
    return {
      push: (chunk) => {
        const text = this.mask(pending + chunk);
        const hold = text.length - this.#startAtEnd(text);
        pending = text.slice(hold);
        return text.slice(0, hold);
      },
      end: () => {
        const rest = pending;
        pending = "";
        return rest;
      },
    };
  }

  /**
   * A masker for bytes in chunks (a file's content): binary safe, only the
   * token's own bytes change (each byte is one latin1 character here).
   */
  byteStream(): { push(chunk: Uint8Array): Buffer; end(): Buffer } {
    const text = new TokenMask(Buffer.from(this.#token, "utf8").toString("latin1")).stream();
    return {
      push: (chunk) => Buffer.from(text.push(Buffer.from(chunk).toString("latin1")), "latin1"),
      end: () => Buffer.from(text.end(), "latin1"),
    };
  }

  /** The length of the longest end of `text` that begins the token (the whole token is already masked). */
  #startAtEnd(text: string): number {
    for (let k = Math.min(this.#token.length - 1, text.length); k > 0; k--)
      if (text.endsWith(this.#token.slice(0, k))) return k;
    return 0;
  }
}
