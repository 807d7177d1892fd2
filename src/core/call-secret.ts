/** Per-call ids and secrets: the secret travels as the first line of a call's stdin, never in argv or the environment. */

import { randomBytes } from "node:crypto";

export const newId = (): string => randomBytes(6).toString("hex");
export const newSecret = (): string => randomBytes(16).toString("hex");

/** The call's stdin: the secret's line, then the command's own bytes. */
export function withSecret(secret: string, stdin: Uint8Array | undefined): Uint8Array {
  const line = Buffer.from(`${secret}\n`);
  return stdin === undefined ? line : Buffer.concat([line, stdin]);
}
