/**
 * The public shape of a shell session, whoever runs the session model.
 *
 * `Session` runs it in this process over a Transport. A gateway environment
 * runs it in a `shellwright serve` process and talks HTTP to it. Callers (the
 * tools, the CLI, users) depend on this type, so both are interchangeable.
 */

import type { SessionPaths } from "./script.js";
import type { ExecuteOptions, ExecuteResult, SessionState } from "./session.js";

export interface Environment {
  /** The session id (12 hex digits); it also names the snapshot files. */
  readonly id: string;
  /** The backend's name: "local", "docker", …, "gateway". */
  readonly backend: string;
  /** The session's cwd after the last command that finished. */
  readonly cwd: string;
  /** False when init failed and commands run as `bash -l -c` without a snapshot. */
  readonly snapshotReady: boolean;
  readonly closed: boolean;
  /** The snapshot and cwd files, as paths inside the backend. */
  readonly paths: SessionPaths;
  state(): SessionState;
  execute(command: string, options?: ExecuteOptions): Promise<ExecuteResult>;
  /**
   * Runs `hook` when the environment closes, while commands still work (the
   * tools' process registry kills background processes this way). Returns a
   * function that removes it.
   */
  beforeClose(hook: () => Promise<void> | void): () => void;
  close(): Promise<void>;
}
