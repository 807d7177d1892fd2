/**
 * Checkpoints of a live session (docs/branching.md): the public types and
 * the checks of their options. A leaf: environment.ts imports it.
 */

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

/** The backend's own snapshot of the whole filesystem of its sandbox (Modal, Daytona; docs/branching.md). */
export interface FilesystemSnapshot {
  /** What the backend calls it: a Modal image id (`im-…`), a Daytona snapshot name. */
  readonly snapshot: string;
}

/** What a checkpoint holds. */
export interface CheckpointContents {
  /** The shell state: cwd, variables, functions, aliases, options (docs/persistence.md). Always held. */
  readonly shell: true;
  /** The workspace's files, when the session declared one; absent otherwise. */
  readonly workspace?: WorkspaceCopy;
  /** Every file of the backend's sandbox, where its SDK snapshots it; absent otherwise. */
  readonly filesystem?: FilesystemSnapshot;
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
