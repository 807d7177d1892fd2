/** The `x-idempotency-key` header hermes' client sends with a create: a UUID, stable per environment. */

import { describe } from "../../core/options.js";
import { HttpError } from "../http.js";

const MAX_KEY_LENGTH = 256;

/** The key, undefined without one; a 400 naming the header for one that is empty, too long, or sent twice. */
export function idempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header))
    throw new HttpError(400, "INVALID_OPTION", "x-idempotency-key was sent more than once; send one key", {
      option: "x-idempotency-key",
    });
  if (header === "" || header.length > MAX_KEY_LENGTH)
    throw new HttpError(
      400,
      "INVALID_OPTION",
      `x-idempotency-key must be 1–${MAX_KEY_LENGTH} characters, got ${describe(header)}`,
      { option: "x-idempotency-key" },
    );
  return header;
}
