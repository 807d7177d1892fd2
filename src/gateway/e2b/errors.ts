/**
 * Errors in E2B's shape. The control API answers `{code, message}` (openapi.yml's
 * Error: code is the HTTP status); the SDK reads `message` into its error and,
 * for some calls, `code === 404` to answer "not found" rather than throw.
 */

import type { ServerResponse } from "node:http";
import { CheckpointError, InvalidOptionError, UnsupportedError } from "../../core/errors.js";
import { HttpError, sendJson } from "../http.js";

export class E2bError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "E2bError";
    this.status = status;
  }
}

/** What E2B's API answers for a feature this server does not have; 501, so no client takes it for a missing sandbox. */
export function notImplemented(feature: string): E2bError {
  return new E2bError(
    501,
    `${feature} is not implemented by this Shellwright server (shellwright serve --api e2b); see docs/e2b.md`,
  );
}

export function sandboxNotFound(id: string): E2bError {
  return new E2bError(404, `Sandbox ${JSON.stringify(id)} not found (killed, timed out, or never created here)`);
}

/** Any error as an E2B answer: ours keep their status, the gateway's HttpErrors theirs, the rest are 500s without internals. */
export function toE2bError(error: unknown, log: (message: string) => void): E2bError {
  if (error instanceof E2bError) return error;
  if (error instanceof HttpError) return new E2bError(error.status, error.message);
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof InvalidOptionError) return new E2bError(400, message);
  if (error instanceof UnsupportedError) return new E2bError(501, message);
  // A fork or snapshot: refused beside a running command (409, as E2B's conflict), or failed in the backend.
  if (error instanceof CheckpointError) return new E2bError(CHECKPOINT_STATUS[error.reason], message);
  log(`e2b: internal error: ${message}`);
  return new E2bError(500, "Internal error in the Shellwright server; see its log");
}

const CHECKPOINT_STATUS: Record<CheckpointError["reason"], number> = {
  busy: 409,
  too_large: 507,
  not_found: 404,
  aborted: 500,
  failed: 500,
};

export function sendE2bError(res: ServerResponse, error: E2bError, headers: Record<string, string> = {}): void {
  sendJson(res, error.status, { code: error.status, message: error.message }, headers);
}
