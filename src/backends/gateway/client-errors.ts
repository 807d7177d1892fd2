/** The gateway client's errors: what the gateway answered, and a connection lost mid-request. */

import {
  BackendUnavailableError,
  CheckpointError,
  InvalidOptionError,
  SessionClosedError,
  UnsupportedError,
  type CheckpointErrorReason,
} from "../../core/errors.js";
import type { ErrorBody } from "../../http/gateway-protocol.js";

export function gatewayError(status: number, error: ErrorBody["error"] | undefined, url: URL): Error {
  const message = error?.message ?? `HTTP ${status}`;
  switch (error?.code) {
    case "SESSION_NOT_FOUND":
      return new SessionClosedError(`The gateway session is gone: ${message}`);
    case "INVALID_OPTION":
    case "FORBIDDEN":
      if (error.option !== undefined) return new InvalidOptionError(error.option, message);
      break;
    case "CHECKPOINT_FAILED":
      return new CheckpointError(checkpointReason(error.reason), message, { backend: "gateway" });
    case "UNSUPPORTED":
      return new UnsupportedError(message, { backend: "gateway" });
    case "UNAUTHORIZED":
      return new BackendUnavailableError(
        `The gateway at ${url.origin} refused the token (401); pass token or set $SHELLWRIGHT_GATEWAY_TOKEN to the gateway's token`,
        { backend: "gateway" },
      );
    default:
  }
  return new BackendUnavailableError(
    `The gateway at ${url.origin} answered ${status}${error ? ` ${error.code}` : ""}: ${message}`,
    { backend: "gateway" },
  );
}

export function connectionLost(cause: unknown, url: URL): BackendUnavailableError {
  return new BackendUnavailableError(
    `The connection to the gateway at ${url.origin} was lost mid-request (the gateway stopped or restarted); the command's outcome is unknown`,
    { cause, backend: "gateway" },
  );
}

const REASONS: readonly CheckpointErrorReason[] = ["busy", "too_large", "not_found", "aborted", "failed"];

/** The server's reason, or "failed" for one this client does not know (a newer gateway's). */
function checkpointReason(reason: string | undefined): CheckpointErrorReason {
  return REASONS.find((known) => known === reason) ?? "failed";
}
