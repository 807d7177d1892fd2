/** The gateway client's errors: what the gateway answered, and a connection lost mid-request. */

import { BackendUnavailableError, InvalidOptionError, SessionClosedError } from "../../core/errors.js";
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
