/**
 * Checkpoints of a live session (docs/branching.md): the public types, the
 * checks of their options, and what a backend implements to offer them.
 * A leaf like environment.ts: it names no backend and no implementation.
 */

import type { Environment, SessionPaths } from "./environment.js";
import { InvalidOptionError } from "./errors.js";
import { describe, plainObject } from "./options.js";

/** The most children one fork() makes. */
export const MAX_FORK_COUNT = 100;

/** The workspace a checkpoint holds a copy of. */
export interface WorkspaceCopy {
  /** The workspace root, as the session declared it. */
  readonly root: string;
  /** Its size when copied: the files' apparent sizes, in bytes. */
  readonly bytes: number;
}

/** What a checkpoint holds. */
export interface CheckpointContents {
  /** The shell state: cwd, variables, functions, aliases, options (docs/persistence.md). Always held. */
  readonly shell: true;
  /** The workspace's files, when the session declared one; absent otherwise. */
  readonly workspace?: WorkspaceCopy;
}

/** A saved state of one session, which `rollback` returns to. Plain data: it holds no handle. */
export interface Checkpoint {
  /** `cp-` and 12 hex digits. */
  readonly id: string;
  /** The session it belongs to (and can be rolled back in). */
  readonly sessionId: string;
  readonly createdAt: Date;
  readonly holds: CheckpointContents;
}

export interface CheckpointOptions {
  /** Aborting stops the copy: nothing is kept and the session is as it was. */
  signal?: AbortSignal;
}

export interface RollbackOptions {
  /** Aborting before the restore is swapped in leaves the session as it was. */
  signal?: AbortSignal;
}

export interface ForkOptions {
  /** How many children, 1 to 100. */
  count: number;
  /** Aborting stops the fork: children already opened are closed again. */
  signal?: AbortSignal;
}

/** The session, as its backend's checkpoint support sees it. */
export interface CheckpointHost {
  readonly sessionId: string;
  readonly paths: SessionPaths;
  readonly cwd: string;
}

/**
 * What a backend implements to offer checkpoints (a transport's
 * `checkpoints`). The session calls it one operation at a time and never
 * while one of its commands runs.
 */
export interface CheckpointSupport {
  /** The declared workspace root; undefined when checkpoints hold the shell state only. */
  readonly workspaceRoot: string | undefined;
  /** Saves the snapshot (and the workspace) under `id`; on failure keeps nothing of it. */
  save(host: CheckpointHost, id: string, signal: AbortSignal | undefined): Promise<WorkspaceCopy | undefined>;
  /**
   * Ends the session's background processes and PTYs, then puts the saved
   * snapshot (and workspace) back, all of it or none of it.
   */
  restore(host: CheckpointHost, id: string, signal: AbortSignal | undefined): Promise<void>;
  /** Removes what `save` kept under `id`. */
  release(id: string): Promise<void>;
  /** A new, independent session from this one's state and files now. */
  fork(host: CheckpointHost, signal: AbortSignal | undefined): Promise<Environment>;
  /** At close: removes everything it still keeps. */
  close(): Promise<void>;
}

function checkSignal(signal: unknown): AbortSignal | undefined {
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new InvalidOptionError("signal", `signal must be an AbortSignal, got ${describe(signal)}`);
  return signal;
}

function checkKeys(what: string, options: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(options))
    if (!known.includes(key))
      throw new InvalidOptionError(key, `Unknown ${what} option ${describe(key)}; known options: ${known.join(", ")}`);
}

/** checkpoint() and rollback() options, checked once where they enter. */
export function checkCheckpointOptions(
  what: "checkpoint" | "rollback",
  options: unknown = {},
): AbortSignal | undefined {
  const raw = plainObject("options", options);
  checkKeys(what, raw, ["signal"]);
  return checkSignal(raw.signal);
}

/** fork() options, checked once where they enter. */
export function checkForkOptions(options: unknown): { count: number; signal: AbortSignal | undefined } {
  const raw = plainObject("options", options);
  checkKeys("fork", raw, ["count", "signal"]);
  const count = raw.count;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > MAX_FORK_COUNT)
    throw new InvalidOptionError(
      "count",
      `count must be an integer from 1 to ${MAX_FORK_COUNT}, got ${describe(count)}`,
    );
  return { count, signal: checkSignal(raw.signal) };
}

/** A checkpoint as given to rollback() or releaseCheckpoint(): its id, whatever else it carries. */
export function checkpointId(checkpoint: unknown): string {
  const id = (checkpoint as { id?: unknown } | null | undefined)?.id;
  if (typeof checkpoint !== "object" || checkpoint === null || typeof id !== "string" || !/^cp-[0-9a-f]{12}$/.test(id))
    throw new InvalidOptionError(
      "checkpoint",
      `checkpoint must be a Checkpoint from checkpoint(), got ${describe(checkpoint)}`,
    );
  return id;
}
