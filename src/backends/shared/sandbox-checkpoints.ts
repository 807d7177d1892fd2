/**
 * Checkpoints of a whole sandbox, for the backends whose SDK snapshots a
 * sandbox's filesystem (Modal, Daytona; docs/branching.md). A checkpoint is
 * the SDK's snapshot of every file plus the session's shell snapshot, kept
 * here (a copy in the sandbox would not survive the sandbox's replacement);
 * a rollback starts a new sandbox from the snapshot, writes the shell
 * snapshot into it, ends the session's processes in the old one and then
 * swaps the new one in, so a failure before the swap leaves the session as
 * it was. The backend says how each step goes through its SDK.
 */

import type { CheckpointHost, CheckpointSupport } from "../../core/checkpoint-support.js";
import type { FilesystemSnapshot } from "../../core/checkpoint.js";
import type { Environment } from "../../core/environment.js";
import { checkAborted } from "../../core/branches.js";
import { CheckpointError } from "../../core/errors.js";
import { shellQuote } from "../../core/script.js";
import type { Transport } from "../../core/transport.js";
import { messageOf } from "./error-message.js";

/** What the backend does through its SDK. `Box` is its sandbox object; a snapshot is named by a string. */
export interface SandboxSnapshotHooks<Box> {
  /** The session's transport: its runBash reads the shell snapshot. */
  transport: Pick<Transport, "name" | "runBash">;
  /** Snapshots the filesystem of the session's sandbox now, under a name made from `id`; says what it is called. */
  snapshot(id: string): Promise<string>;
  /** Deletes a snapshot (a released checkpoint, one an abort left behind). */
  deleteSnapshot(snapshot: string): Promise<void>;
  /** A new sandbox started from the snapshot: not yet the session's. */
  boxFrom(snapshot: string): Promise<Box>;
  /** Writes `bytes` as `path` (mode 0600) in a box that is not yet the session's. */
  writeFile(box: Box, path: string, bytes: Uint8Array): Promise<void>;
  /** Lets a box go that never became the session's. */
  dropBox(box: Box): Promise<void>;
  /** Ends the session's processes in its sandbox (and restarts its fast path). */
  endProcesses(): Promise<void>;
  /** Makes `box` the session's sandbox; the one it replaces is let go. */
  swapIn(box: Box): Promise<void>;
  /** `count` new sessions from the sandbox's files now, each given `shell` as its snapshot; on failure none is left open. */
  forkMany(
    host: CheckpointHost,
    count: number,
    shell: Uint8Array,
    signal: AbortSignal | undefined,
  ): Promise<Environment[]>;
}

interface Saved {
  filesystem: string;
  shell: Uint8Array;
}

export class SandboxCheckpoints<Box> implements CheckpointSupport {
  readonly workspaceRoot = undefined;
  readonly #hooks: SandboxSnapshotHooks<Box>;
  readonly #saved = new Map<string, Saved>();

  constructor(hooks: SandboxSnapshotHooks<Box>) {
    this.#hooks = hooks;
  }

  get #backend(): string {
    return this.#hooks.transport.name;
  }

  async save(
    host: CheckpointHost,
    id: string,
    signal: AbortSignal | undefined,
  ): Promise<{ filesystem: FilesystemSnapshot }> {
    const what = "take a checkpoint";
    const shell = await this.#readShell(host, what);
    checkAborted(signal, what, this.#backend);
    const pending = this.#hooks.snapshot(id);
    const filesystem = await this.#untilAborted(pending, signal, what, (made) => this.#hooks.deleteSnapshot(made));
    this.#saved.set(id, { filesystem, shell });
    return { filesystem: { snapshot: filesystem } };
  }

  async restore(host: CheckpointHost, id: string, signal: AbortSignal | undefined): Promise<void> {
    const what = "roll back";
    const saved = this.#saved.get(id);
    if (saved === undefined)
      throw new CheckpointError("not_found", `Cannot ${what}: the ${this.#backend} backend holds no checkpoint ${id}`, {
        backend: this.#backend,
      });
    const hooks = this.#hooks;
    const box = await this.#untilAborted(hooks.boxFrom(saved.filesystem), signal, what, (made) => hooks.dropBox(made));
    try {
      await this.#step(what, "write the shell state into the new sandbox", () =>
        hooks.writeFile(box, host.paths.snapshot, saved.shell),
      );
      checkAborted(signal, what, this.#backend);
      // Past this point nothing is aborted: what the rollback ends cannot be brought back.
      await this.#step(what, "end the session's processes", () => hooks.endProcesses());
    } catch (error) {
      await hooks.dropBox(box).catch(() => undefined);
      throw error;
    }
    await this.#step(what, "swap the new sandbox in", () => hooks.swapIn(box));
  }

  async release(id: string): Promise<void> {
    const saved = this.#saved.get(id);
    this.#saved.delete(id);
    if (saved !== undefined)
      await this.#step("release a checkpoint", `delete snapshot ${saved.filesystem}`, () =>
        this.#hooks.deleteSnapshot(saved.filesystem),
      );
  }

  async fork(host: CheckpointHost, signal: AbortSignal | undefined): Promise<Environment> {
    const [child] = await this.forkMany(host, 1, signal);
    return child!;
  }

  async forkMany(host: CheckpointHost, count: number, signal: AbortSignal | undefined): Promise<Environment[]> {
    const shell = await this.#readShell(host, "fork");
    checkAborted(signal, "fork", this.#backend);
    return this.#step("fork", "open the children", () => this.#hooks.forkMany(host, count, shell, signal));
  }

  /** At close: every snapshot the session's checkpoints still hold is deleted. */
  async close(): Promise<void> {
    const snapshots = [...this.#saved.values()].map((saved) => saved.filesystem);
    this.#saved.clear();
    await Promise.allSettled(snapshots.map((snapshot) => this.#hooks.deleteSnapshot(snapshot)));
  }

  /** The session's shell snapshot as it is now, read through its own transport. */
  async #readShell(host: CheckpointHost, what: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    const code = await this.#step(what, "read the shell state", async () => {
      const handle = this.#hooks.transport.runBash(`cat -- ${shellQuote(host.paths.snapshot)}`, { cleanEnv: false });
      for await (const chunk of handle.output) chunks.push(Buffer.from(chunk));
      return handle.wait();
    });
    if (code !== 0)
      throw new CheckpointError(
        "failed",
        `Cannot ${what}: reading the shell state in the ${this.#backend} backend exited ${code}: ${Buffer.concat(chunks).toString("utf8").trim()}`,
        { backend: this.#backend },
      );
    return Buffer.concat(chunks);
  }

  /**
   * The SDK call's result, or an `aborted` CheckpointError as soon as the signal fires: the SDK cannot cancel
   * the call, so what it makes after that is undone (`undo`) once it arrives.
   */
  async #untilAborted<T>(
    pending: Promise<T>,
    signal: AbortSignal | undefined,
    what: string,
    undo: (made: T) => Promise<void>,
  ): Promise<T> {
    const call = this.#step(what, "call the SDK", () => pending);
    if (signal === undefined) return call;
    checkAborted(signal, what, this.#backend);
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(abortedError(what, this.#backend));
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([call, aborted]);
    } catch (error) {
      if (signal.aborted) void call.then(undo).catch(() => undefined);
      throw error;
    } finally {
      signal.removeEventListener("abort", onAbort!);
    }
  }

  /** One step through the SDK; its failure becomes a CheckpointError that says which step. */
  async #step<T>(what: string, step: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof CheckpointError) throw error;
      throw new CheckpointError("failed", `Cannot ${what}: could not ${step}: ${messageOf(error)}`, {
        cause: error,
        backend: this.#backend,
      });
    }
  }
}

function abortedError(what: string, backend: string): CheckpointError {
  return new CheckpointError("aborted", `Cannot ${what}: aborted by its signal`, { backend });
}

/** A fork's child as the backend opens it: the session and its transport. */
export interface OpenedChild {
  env: Environment;
  transport: Pick<Transport, "runBash">;
}

/** How many children of one fork are opened at once. */
const FORK_PARALLEL = 8;

/**
 * Opens `count` children with `open`, a few at a time, and writes `shell` over each one's snapshot through
 * its own transport (renamed into place whole, so a fast path there sees a new file). On any failure, or
 * when `signal` fires, every child opened is closed again and the fork fails.
 */
export async function openForkChildren(
  backend: string,
  count: number,
  shell: Uint8Array,
  signal: AbortSignal | undefined,
  open: () => Promise<OpenedChild>,
): Promise<Environment[]> {
  const opened: Environment[] = [];
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < count && !failed) {
      next++;
      checkAborted(signal, "fork", backend);
      const child = await open();
      opened.push(child.env);
      const target = shellQuote(child.env.paths.snapshot);
      const handle = child.transport.runBash(`umask 077; cat > ${target}.fork && mv -f -- ${target}.fork ${target}`, {
        cleanEnv: false,
        stdin: shell,
      });
      for await (const chunk of handle.output) void chunk;
      const code = await handle.wait();
      if (code !== 0)
        throw new CheckpointError("failed", `Cannot fork: writing the shell state into a child exited ${code}`, {
          backend,
        });
    }
  };
  // Every worker settles before the cleanup: a child still being opened when another failed is closed too.
  const workers = Array.from({ length: Math.min(count, FORK_PARALLEL) }, () =>
    worker().catch((error: unknown) => {
      failed = true;
      throw error;
    }),
  );
  const failure = (await Promise.allSettled(workers)).find((result) => result.status === "rejected");
  try {
    if (failure !== undefined) throw failure.reason;
    checkAborted(signal, "fork", backend);
  } catch (error) {
    await Promise.allSettled(opened.map((child) => child.close()));
    if (error instanceof CheckpointError) throw error;
    throw new CheckpointError("failed", `Cannot fork: ${messageOf(error)}`, { cause: error, backend });
  }
  return opened;
}
