/**
 * Shellwright's errors as the Connect codes envd answers with, so E2B's SDK
 * raises what its users catch: not_found is its FileNotFoundError,
 * invalid_argument its InvalidArgumentError, unavailable a sandbox that is
 * gone. Messages name the path as the caller gave it; they never hold a token.
 */

import { Code, ConnectError } from "@connectrpc/connect";
import { BackendUnavailableError, FileError, InvalidOptionError, SessionClosedError } from "../../../core/errors.js";
import { PathProblem } from "./paths.js";

const FILE_CODES: Record<FileError["reason"], Code> = {
  not_found: Code.NotFound,
  is_directory: Code.InvalidArgument,
  not_directory: Code.InvalidArgument,
  not_regular: Code.InvalidArgument,
  not_empty: Code.FailedPrecondition,
  denied: Code.PermissionDenied,
  changed: Code.Aborted,
  failed: Code.Internal,
};

const PATH_CODES: Record<PathProblem["kind"], Code> = {
  invalid_path: Code.InvalidArgument,
  invalid_user: Code.Unauthenticated,
  outside_roots: Code.PermissionDenied,
};

export function toConnectError(error: unknown): ConnectError {
  if (error instanceof ConnectError) return error;
  if (error instanceof PathProblem) return new ConnectError(error.message, PATH_CODES[error.kind]);
  if (error instanceof FileError) return new ConnectError(error.message, FILE_CODES[error.reason]);
  if (error instanceof InvalidOptionError) return new ConnectError(error.message, Code.InvalidArgument);
  if (error instanceof SessionClosedError || error instanceof BackendUnavailableError)
    return new ConnectError(error.message, Code.Unavailable);
  return new ConnectError(error instanceof Error ? error.message : String(error), Code.Internal);
}
