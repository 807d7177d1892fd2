/**
 * Bearer-token checks and token loading. The token never travels on a
 * command line: it comes from an environment variable or a private file.
 */

import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { TOKEN_ENV_VAR } from "../backends/gateway/protocol.js";

export const MIN_TOKEN_LENGTH = 16;

export class TokenCheck {
  readonly #digest: Buffer;

  constructor(token: string) {
    this.#digest = digest(token);
  }

  /**
   * Constant time: both sides are hashed to the same length first, so neither
   * the length nor a matching prefix of a guess shows in the timing.
   */
  matches(authorization: string | undefined): boolean {
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
    const given = digest(match?.[1] ?? "");
    return timingSafeEqual(given, this.#digest) && match !== null;
  }
}

const digest = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

export class TokenSourceError extends Error {
  override readonly name = "TokenSourceError";
}

/**
 * The token from `tokenFile` (which must be private to its owner, like an ssh
 * key) or else from $SHELLWRIGHT_GATEWAY_TOKEN; undefined when neither is set.
 */
export function loadToken(options: { tokenFile?: string | undefined; env?: NodeJS.ProcessEnv }): string | undefined {
  const env = options.env ?? process.env;
  let token: string | undefined;
  let source: string;
  if (options.tokenFile !== undefined) {
    source = `token file ${options.tokenFile}`;
    let mode: number;
    try {
      mode = statSync(options.tokenFile).mode;
      token = readFileSync(options.tokenFile, "utf8").replace(/\r?\n$/, "");
    } catch (error) {
      throw new TokenSourceError(`Cannot read the ${source}: ${(error as Error).message}`);
    }
    if ((mode & 0o077) !== 0) {
      throw new TokenSourceError(`The ${source} is readable by other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 on it`);
    }
  } else {
    source = `$${TOKEN_ENV_VAR}`;
    token = env[TOKEN_ENV_VAR];
    if (token === undefined || token === "") return undefined;
  }
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
    throw new TokenSourceError(`The token from ${source} must be at least ${MIN_TOKEN_LENGTH} characters without whitespace (try: openssl rand -hex 32)`);
  }
  return token;
}
