/**
 * A session's checkpoints, kept the same way whoever implements the
 * session: the records, one operation at a time, and the rule beside
 * commands (docs/branching.md). A checkpoint, rollback or fork is refused
 * while a command of the session runs (its files and state would be caught
 * halfway); a command that arrives during one waits for it to end. Two
 * operations at once run one after the other, so two rollbacks racing end
 * in the state of the one that ran last.
 */

import { newId } from "./call-secret.js";
import {
  checkCheckpointOptions,
  checkForkOptions,
  checkpointId,
  type Checkpoint,
  type ForkOptions,
  type RollbackOptions,
  type CheckpointOptions,
} from "./checkpoint.js";
import type { CheckpointHost, CheckpointSupport } from "./checkpoint-support.js";
import type { Environment, ExecuteOptions } from "./environment.js";
import { CheckpointError, SessionClosedError, UnsupportedError } from "./errors.js";

/** The session its checkpoints belong to, read live: who it is now. */
export interface BranchesOwner extends CheckpointHost {
  readonly backend: string;
  readonly closed: boolean;
  readonly snapshotReady: boolean;
}

interface Entry {
  checkpoint: Checkpoint;
  cwd: string;
}

export class Branches {
  readonly #owner: BranchesOwner;
  readonly #setCwd: (cwd: string) => void;
  readonly #support: () => CheckpointSupport | undefined;
  readonly #entries = new Map<string, Entry>();
  /** Commands running now; long-lived isolated ones (a background process's follower) are not counted. */
  #running = 0;
  /** The operation under way: commands that arrive meanwhile wait for it. */
  #gate: Promise<unknown> | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(owner: BranchesOwner, setCwd: (cwd: string) => void, support: () => CheckpointSupport | undefined) {
    this.#owner = owner;
    this.#setCwd = setCwd;
    this.#support = support;
  }

  /**
   * Runs one command of the session, after any operation under way, counted while it runs.
   * Only a call both long-lived and isolated goes uncounted (a background process's
   * follower: it would hold every checkpoint off, and it commits no state); any other
   * could commit its snapshot over a rollback's. A call whose signal fires while it
   * waits stops waiting: the session answers an aborted call without running it.
   */
  async around<T>(options: ExecuteOptions | undefined, call: () => Promise<T>): Promise<T> {
    const signal = options?.signal;
    while (this.#gate !== undefined && signal?.aborted !== true) await untilSettledOrAborted(this.#gate, signal);
    if (options?.longLived === true && options.isolated === true) return call();
    this.#running++;
    try {
      return await call();
    } finally {
      this.#running--;
    }
  }

  get workspaceRoot(): string | undefined {
    return this.#support()?.workspaceRoot;
  }

  list(): Checkpoint[] {
    return [...this.#entries.values()].map((entry) => entry.checkpoint);
  }

  async checkpoint(options?: CheckpointOptions): Promise<Checkpoint> {
    const signal = checkCheckpointOptions("checkpoint", options);
    return this.#operation("take a checkpoint", signal, async (support) => {
      const id = `cp-${newId()}`;
      const createdAt = new Date();
      const cwd = this.#owner.cwd;
      const saved = await support.save(this.#owner, id, signal);
      const holds =
        saved === undefined
          ? { shell: true as const }
          : "filesystem" in saved
            ? { shell: true as const, filesystem: Object.freeze({ ...saved.filesystem }) }
            : { shell: true as const, workspace: saved };
      const checkpoint: Checkpoint = Object.freeze({
        id,
        sessionId: this.#owner.id,
        createdAt,
        holds: Object.freeze(holds),
      });
      this.#entries.set(id, { checkpoint, cwd });
      return checkpoint;
    });
  }

  async rollback(checkpoint: Checkpoint, options?: RollbackOptions): Promise<void> {
    const id = checkpointId(checkpoint);
    const signal = checkCheckpointOptions("rollback", options);
    return this.#operation("roll back", signal, async (support) => {
      const entry = this.#entry(id);
      await support.restore(this.#owner, id, signal);
      this.#setCwd(entry.cwd);
    });
  }

  async releaseCheckpoint(checkpoint: Checkpoint): Promise<void> {
    const id = checkpointId(checkpoint);
    return this.#operation("release a checkpoint", undefined, async (support) => {
      this.#entry(id);
      this.#entries.delete(id);
      await support.release(id);
    });
  }

  async fork(options: ForkOptions): Promise<Environment[]> {
    const { count, signal } = checkForkOptions(options);
    return this.#operation("fork", signal, async (support) => {
      if (support.forkMany !== undefined) return support.forkMany(this.#owner, count, signal);
      const children: Environment[] = [];
      try {
        for (let i = 0; i < count; i++) {
          checkAborted(signal, "fork", this.#owner.backend);
          children.push(await support.fork(this.#owner, signal));
        }
      } catch (error) {
        await Promise.allSettled(children.map((child) => child.close()));
        throw error;
      }
      return children;
    });
  }

  /** At close, after the last command: removes every checkpoint and what the support keeps. */
  async close(): Promise<void> {
    const support = this.#support();
    this.#entries.clear();
    await this.#queue.catch(() => undefined);
    await support?.close();
  }

  #entry(id: string): Entry {
    const entry = this.#entries.get(id);
    if (entry === undefined)
      throw new CheckpointError(
        "not_found",
        `Checkpoint ${id} is not one of this session's (${this.#owner.id}): it was released, or taken in another session`,
        { backend: this.#owner.backend },
      );
    return entry;
  }

  /** One operation at a time, refused while a command runs; commands that arrive meanwhile wait. */
  #operation<T>(
    what: string,
    signal: AbortSignal | undefined,
    op: (support: CheckpointSupport) => Promise<T>,
  ): Promise<T> {
    const run = async (): Promise<T> => {
      const owner = this.#owner;
      if (owner.closed) throw new SessionClosedError();
      const support = this.#support();
      if (support === undefined)
        throw new UnsupportedError(
          `Checkpoints are not supported on the ${owner.backend} backend yet (docs/branching.md)`,
          {
            backend: owner.backend,
          },
        );
      if (!owner.snapshotReady)
        throw new CheckpointError("failed", `Cannot ${what}: the session has no snapshot (its init failed)`, {
          backend: owner.backend,
        });
      if (this.#running > 0)
        throw new CheckpointError(
          "busy",
          `Cannot ${what} while a command of the session runs (${this.#running} running); wait for it to finish`,
          { backend: owner.backend },
        );
      checkAborted(signal, what, owner.backend);
      return op(support);
    };
    const result = this.#queue.then(run, run);
    this.#queue = result.catch(() => undefined);
    // From the moment it is asked for: a command that arrives later runs after it.
    this.#gate = result;
    void result
      .catch(() => undefined)
      .finally(() => {
        if (this.#gate === result) this.#gate = undefined;
      });
    return result;
  }
}

/** An aborted operation fails with an error of the one hierarchy, as every other failure does. */
export function checkAborted(signal: AbortSignal | undefined, what: string, backend: string): void {
  if (signal?.aborted === true)
    throw new CheckpointError("aborted", `Cannot ${what}: aborted by its signal`, { backend });
}

/** Waits for `gate` to settle, or for `signal` to fire, whichever comes first. */
function untilSettledOrAborted(gate: Promise<unknown>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return gate.then(noop, noop);
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    gate.then(done, done);
  });
}

function noop(): void {}
