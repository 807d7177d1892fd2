/**
 * The bearer token: what a server accepts as one, and the comparison with
 * what a request sends, in constant time.
 */

import { createHash, timingSafeEqual } from "node:crypto";
import { InvalidOptionError } from "../core/errors.js";

/** Long enough that guessing over the network is hopeless. */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Why `token` cannot be a bearer token, or undefined when it can. Says the
 * length, never the value: the text ends up in logs.
 */
export function tokenProblem(token: unknown): string | undefined {
  if (typeof token !== "string")
    return `must be a string, got ${token === null ? "null" : Array.isArray(token) ? "an array" : `a ${typeof token}`}`;
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
    return `must be at least ${MIN_TOKEN_LENGTH} characters without whitespace (try: openssl rand -hex 32), got ${token.length} characters${/\s/.test(token) ? " with whitespace" : ""}`;
  }
  return undefined;
}

/** `token`, checked as the value of option `option`. */
export function checkTokenOption(option: string, token: unknown): string {
  const problem = tokenProblem(token);
  if (problem !== undefined) throw new InvalidOptionError(option, `${option} ${problem}`);
  return token as string;
}

export class TokenCheck {
  readonly #digest: Buffer;

  constructor(token: string) {
    this.#digest = digest(token);
  }

  /**
   * True when the Authorization header is `Bearer <the token>` (the scheme in
   * any case, as RFC 9110 has it). Constant time: both sides are hashed to
   * the same length first, so neither the length nor a matching prefix of a
   * guess shows in the timing.
   */
  matches(authorization: string | undefined): boolean {
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
    const given = digest(match?.[1] ?? "");
    return timingSafeEqual(given, this.#digest) && match !== null;
  }
}

const digest = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();
