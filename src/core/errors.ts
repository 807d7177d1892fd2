/**
 * One error hierarchy for everything Shellwright throws.
 *
 * A command that exits non-zero is a result, never an error: these are thrown
 * only when Shellwright itself could not do the job (bad options, a backend
 * that is gone, a session that was closed).
 */

const MARK = Symbol.for("shellwright.error");

export type ErrorCode =
  | "INVALID_OPTION"
  | "BACKEND_UNAVAILABLE"
  | "SPAWN_FAILED"
  | "SESSION_CLOSED"
  | "SESSION_NOT_FOUND"
  | "SYNC_FAILED"
  | "PROCESS_FAILED"
  | "MISSING_DEPENDENCY"
  | "FILE_FAILED"
  | "UNSUPPORTED"
  | "CHECKPOINT_FAILED";

export class ShellwrightError extends Error {
  readonly code: ErrorCode;
  readonly backend: string | undefined;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; backend?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.backend = options.backend;
    (this as unknown as Record<symbol, boolean>)[MARK] = true;
  }
}

/** The backend cannot be reached or has gone away (container removed, host down). */
export class BackendUnavailableError extends ShellwrightError {
  constructor(message: string, options: { cause?: unknown; backend?: string } = {}) {
    super("BACKEND_UNAVAILABLE", message, options);
  }
}

/** The process that runs a command could not be started. */
export class SpawnError extends ShellwrightError {
  constructor(message: string, options: { cause?: unknown; backend?: string } = {}) {
    super("SPAWN_FAILED", message, options);
  }
}

/** The session was closed; create a new environment. */
export class SessionClosedError extends ShellwrightError {
  constructor(message = "The session is closed; create a new environment to run more commands.") {
    super("SESSION_CLOSED", message);
  }
}

/** Files could not be synced into the backend; the next sync starts from scratch. */
export class SyncError extends ShellwrightError {
  constructor(message: string, options: { cause?: unknown; backend?: string } = {}) {
    super("SYNC_FAILED", message, options);
  }
}

/**
 * A background process could not be started (too many running, a directory
 * that cannot be entered) or fed (its stdin is not being read).
 */
export class ProcessError extends ShellwrightError {
  constructor(message: string, options: { cause?: unknown; backend?: string } = {}) {
    super("PROCESS_FAILED", message, options);
  }
}

/** Why a file operation of the SDK (`files(env)`) failed. */
export type FileErrorReason =
  "not_found" | "is_directory" | "not_directory" | "not_regular" | "not_empty" | "denied" | "changed" | "failed";

/**
 * A file operation could not be done: the path is missing or of the wrong
 * kind, the guard refused it, it changed under the write, or the backend
 * failed. `reason` says which; `path` is the path as given.
 */
export class FileError extends ShellwrightError {
  readonly reason: FileErrorReason;
  readonly path: string;

  constructor(
    reason: FileErrorReason,
    path: string,
    message: string,
    options: { cause?: unknown; backend?: string } = {},
  ) {
    super("FILE_FAILED", message, options);
    this.reason = reason;
    this.path = path;
  }
}

/** The backend cannot do this at all (a URL for a port where it has no network of its own to reach). */
export class UnsupportedError extends ShellwrightError {
  constructor(message: string, options: { cause?: unknown; backend?: string } = {}) {
    super("UNSUPPORTED", message, options);
  }
}

/** Why a checkpoint, rollback or fork failed (docs/branching.md). */
export type CheckpointErrorReason = "busy" | "too_large" | "not_found" | "aborted" | "failed";

/**
 * A checkpoint, rollback or fork could not be done: a command was running,
 * the workspace is over its size limit, the checkpoint is unknown or
 * released, the caller aborted, or the copy failed. The session is left as it was.
 */
export class CheckpointError extends ShellwrightError {
  readonly reason: CheckpointErrorReason;

  constructor(reason: CheckpointErrorReason, message: string, options: { cause?: unknown; backend?: string } = {}) {
    super("CHECKPOINT_FAILED", message, options);
    this.reason = reason;
  }
}

/** A named session (CLI) does not exist. */
export class SessionNotFoundError extends ShellwrightError {
  constructor(name: string) {
    super("SESSION_NOT_FOUND", `No session named ${JSON.stringify(name)}; \`shellwright sessions\` lists them.`);
  }
}

/**
 * A bad option. It extends TypeError, as callers of a JavaScript API expect,
 * and carries the same mark and `code` as every other Shellwright error.
 */
export class InvalidOptionError extends TypeError {
  readonly code = "INVALID_OPTION" as const;
  readonly option: string;

  constructor(option: string, message: string) {
    super(message);
    this.name = "InvalidOptionError";
    this.option = option;
    (this as unknown as Record<symbol, boolean>)[MARK] = true;
  }
}

/** True for any error Shellwright throws, also across two copies of the package. */
export function isShellwrightError(error: unknown): error is ShellwrightError | InvalidOptionError {
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[MARK] === true;
}
