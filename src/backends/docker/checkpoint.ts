/**
 * Checkpoints on the docker backend (docs/branching.md).
 *
 * A checkpoint lives in the container: a private directory under its temp
 * dir holding a copy of the snapshot and, with a declared `workspace`, a
 * `cp -a` of it. A rollback copies it back beside the root first and only
 * then, after ending the session's processes, swaps it in by renames (one
 * script, back to back), as on local. A fork commits the whole container
 * once (`docker commit`, fork.ts) and starts each child from that image.
 */

import { randomBytes } from "node:crypto";
import type { WorkspaceCopy } from "../../core/checkpoint.js";
import type { CheckpointHost, CheckpointSupport } from "../../core/checkpoint-support.js";
import type { Environment } from "../../core/environment.js";
import { CheckpointError } from "../../core/errors.js";
import type { EngineApi } from "./engine.js";
import { runScript, succeeded, type ScriptResult } from "./checkpoint-exec.js";
import {
  EXIT_BAD_WORKSPACE,
  EXIT_NOT_FOUND,
  EXIT_TOO_LARGE,
  FORK_CHECK,
  PREPARE,
  SAVE,
  SWAP,
  UNDO_PREPARE,
} from "./checkpoint-scripts.js";
import { forkContainers, removeForkImage, type ForkChild } from "./checkpoint-fork.js";
import type { DockerWorkspace } from "./workspace-config.js";

const BACKEND = "docker";

/** What the checkpoints need of their session's transport and backend. */
export interface DockerCheckpointHooks {
  /** An engine of their own: it outlives the transport's, to remove a fork's image once the container is gone. */
  engine: EngineApi;
  /** The session's container now (valid once the transport started). */
  containerId(): string;
  /** The container's temp dir, where the checkpoints are kept. */
  tempDir: string;
  /** Ends the session's processes in the container and restarts its fast path. */
  endProcesses(): Promise<void>;
  /** Opens a child session of the same config from `image`, starting in `cwd`. */
  openChild(image: string, cwd: string): Promise<ForkChild>;
}

export class DockerCheckpoints implements CheckpointSupport {
  readonly #workspace: DockerWorkspace | undefined;
  readonly #hooks: DockerCheckpointHooks;
  /** The image this session's container was forked from: removed after it, when no other container uses it. */
  readonly #forkImage: string | undefined;
  /** Per session, so that sessions sharing a kept container (or an image committed with it) never meet. */
  readonly #dir: string;

  constructor(workspace: DockerWorkspace | undefined, hooks: DockerCheckpointHooks, forkImage?: string) {
    this.#workspace = workspace;
    this.#hooks = hooks;
    this.#forkImage = forkImage;
    this.#dir = `${hooks.tempDir}/.shellwright-checkpoints-${randomBytes(6).toString("hex")}`;
  }

  get workspaceRoot(): string | undefined {
    return this.#workspace?.root;
  }

  async save(host: CheckpointHost, id: string, signal: AbortSignal | undefined): Promise<WorkspaceCopy | undefined> {
    const what = "take a checkpoint";
    const ws = this.#workspace;
    const args = [host.paths.snapshot, this.#dir, id, ws?.root ?? "", String(ws?.maxBytes ?? 0)];
    let result: ScriptResult;
    try {
      result = await this.#run(SAVE, args, what, signal);
    } catch (error) {
      // Aborted: the copy was ended in the container, its files are removed here.
      await this.release(id).catch(() => undefined);
      throw error;
    }
    const text = this.#explain(result, what);
    return ws === undefined ? undefined : { root: ws.root, bytes: bytesOf(text, what) };
  }

  async restore(host: CheckpointHost, id: string, signal: AbortSignal | undefined): Promise<void> {
    const what = "roll back";
    const tag = randomBytes(6).toString("hex");
    const root = this.#workspace?.root ?? "";
    const undo = () =>
      this.#run(UNDO_PREPARE, [host.paths.snapshot, root, tag], what, undefined).catch(() => undefined);
    try {
      this.#explain(await this.#run(PREPARE, [host.paths.snapshot, this.#dir, id, root, tag], what, signal), what);
    } catch (error) {
      await undo();
      throw error;
    }
    // Past this point nothing is aborted: what the rollback ends cannot be brought back.
    try {
      await this.#hooks.endProcesses();
    } catch (error) {
      await undo();
      throw wrap(error, what);
    }
    // Never undone from here: an exec the engine lost goes on in the container and finishes the swap by itself,
    // and removing its pending copies under it could leave a mix.
    this.#explain(await this.#run(SWAP, [host.paths.snapshot, root, tag], what, undefined), what);
  }

  async release(id: string): Promise<void> {
    await this.#run('rm -rf -- "$1/$2"', [this.#dir, id], "release a checkpoint", undefined);
  }

  fork(host: CheckpointHost, signal: AbortSignal | undefined): Promise<Environment> {
    return this.forkMany(host, 1, signal).then((children) => children[0]!);
  }

  async forkMany(host: CheckpointHost, count: number, signal: AbortSignal | undefined): Promise<Environment[]> {
    const ws = this.#workspace;
    if (ws !== undefined)
      this.#explain(await this.#run(FORK_CHECK, [ws.root, String(ws.maxBytes)], "fork", signal), "fork");
    return forkContainers({
      engine: this.#hooks.engine,
      containerId: this.#hooks.containerId(),
      sessionId: host.id,
      snapshot: host.paths.snapshot,
      cwd: host.cwd,
      count,
      signal,
      openChild: this.#hooks.openChild,
    });
  }

  /** Before the container stops: a kept one outlives the session, its checkpoints do not. */
  async close(): Promise<void> {
    await this.#run('rm -rf -- "$1"', [this.#dir], "close", undefined).catch(() => undefined);
  }

  /** After the container is gone: the image it was forked from, once no container uses it. */
  async afterStop(): Promise<void> {
    try {
      if (this.#forkImage !== undefined) await removeForkImage(this.#hooks.engine, this.#forkImage);
    } finally {
      this.#hooks.engine.close();
    }
  }

  #run(script: string, args: string[], what: string, signal: AbortSignal | undefined): Promise<ScriptResult> {
    return runScript(this.#hooks.engine, this.#hooks.containerId(), script, args, { signal, what });
  }

  /** The script's output, or the CheckpointError its exit code stands for. */
  #explain(result: ScriptResult, what: string): string {
    const text = result.output.toString("utf8").trim();
    const root = this.#workspace?.root;
    if (result.code === EXIT_TOO_LARGE)
      throw new CheckpointError(
        "too_large",
        `Cannot ${what}: the workspace ${root} holds ${text} bytes, more than workspaceMaxBytes (${this.#workspace?.maxBytes}); raise workspaceMaxBytes or remove files`,
        { backend: BACKEND },
      );
    if (result.code === EXIT_BAD_WORKSPACE)
      throw new CheckpointError("failed", `Cannot ${what}: the workspace ${root} ${text}`, { backend: BACKEND });
    if (result.code === EXIT_NOT_FOUND)
      throw new CheckpointError("not_found", `Cannot ${what}: the checkpoint has no files left in the container`, {
        backend: BACKEND,
      });
    return succeeded(result, what);
  }
}

function bytesOf(text: string, what: string): number {
  const bytes = Number.parseInt(/bytes=(\d+)/.exec(text)?.[1] ?? "", 10);
  if (!Number.isFinite(bytes))
    throw new CheckpointError("failed", `Cannot ${what}: no size in ${JSON.stringify(text)}`, { backend: BACKEND });
  return bytes;
}

function wrap(error: unknown, what: string): unknown {
  if (error instanceof CheckpointError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new CheckpointError("failed", `Cannot ${what}: ${message}`, { cause: error, backend: BACKEND });
}
