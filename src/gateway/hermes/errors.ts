/**
 * Errors as hermes' client shows them. Its `_format_error` prints the
 * body's `error` when that is a string (else `message`, else `code`), so the
 * message goes there, with the code and the field at fault beside it;
 * Shellwright's own API nests them instead (`{error: {code, message}}`).
 */

import type { ServerResponse } from "node:http";
import { isShellwrightError } from "../../core/errors.js";
import { HttpError, sendJson } from "../http.js";
import type { RouteContext } from "../routes.js";

/** Any error a hermes route meets, as the HttpError it is answered with. */
export function toHttpError(error: unknown, ctx: RouteContext): HttpError {
  if (error instanceof HttpError) return error;
  if (isShellwrightError(error)) {
    // A backend's message may quote what a command printed.
    const message = ctx.tokenMask?.mask(error.message) ?? error.message;
    if (error.code === "INVALID_OPTION")
      return new HttpError(400, "INVALID_OPTION", message, { option: (error as { option?: string }).option ?? "" });
    if (error.code === "SESSION_CLOSED")
      return new HttpError(404, "SESSION_NOT_FOUND", "The sandbox was terminated; create a new one");
    if (error.code === "UNSUPPORTED") return new HttpError(501, "UNSUPPORTED", message);
    return new HttpError(502, "BACKEND_ERROR", message);
  }
  ctx.log(`hermes API: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return new HttpError(500, "INTERNAL", "Internal gateway error; the gateway's log has the details");
}

export function sendHermesError(res: ServerResponse, error: HttpError, headers: Record<string, string> = {}): void {
  const extra = { ...headers };
  if (error.retryAfterMs !== undefined)
    extra["retry-after"] = String(Math.max(1, Math.ceil(error.retryAfterMs / 1000)));
  sendJson(
    res,
    error.status,
    {
      error: error.message,
      code: error.code,
      ...(error.option === undefined ? {} : { field: error.option }),
      ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    },
    extra,
  );
}

/** A 400 for a field of a request body, naming the field and the value. */
export function badField(field: string, message: string): HttpError {
  return new HttpError(400, "INVALID_OPTION", message, { option: field });
}
