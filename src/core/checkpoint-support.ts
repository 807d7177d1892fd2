/**
 * What a backend implements to offer checkpoints (docs/branching.md), and
 * what the session hands it. Apart from checkpoint.ts, which the
 * Environment contract imports, so neither imports the other in a cycle.
 */

import type { Environment, SessionPaths } from "./environment.js";
import type { FilesystemSnapshot, WorkspaceCopy } from "./checkpoint.js";

/** The session, as its backend's checkpoint support sees it. */
export interface CheckpointHost {
  /** The session's id. */
  readonly id: string;
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
  /**
   * Saves the snapshot (and the workspace, or the sandbox's whole filesystem) under `id`; on failure keeps
   * nothing of it. Says what it saved beside the shell state.
   */
  save(
    host: CheckpointHost,
    id: string,
    signal: AbortSignal | undefined,
  ): Promise<WorkspaceCopy | { filesystem: FilesystemSnapshot } | undefined>;
  /**
   * Ends the session's background processes and PTYs, then puts the saved
   * snapshot (and workspace) back, all of it or none of it.
   */
  restore(host: CheckpointHost, id: string, signal: AbortSignal | undefined): Promise<void>;
  /** Removes what `save` kept under `id`. */
  release(id: string): Promise<void>;
  /** A new, independent session from this one's state and files now. */
  fork(host: CheckpointHost, signal: AbortSignal | undefined): Promise<Environment>;
  /**
   * All of a fork's children at once, where the backend makes them together
   * (one image for all); used instead of `fork` when present. On failure it
   * leaves none open.
   */
  forkMany?(host: CheckpointHost, count: number, signal: AbortSignal | undefined): Promise<Environment[]>;
  /** At close: removes everything it still keeps. */
  close(): Promise<void>;
}
