/**
 * Checkpoints of a sandboxed session with a workspace (docs/branching.md):
 * the shell state as without the sandbox (checkpoint.ts, no workspace), the
 * workspace as overlay layers (overlay.ts). A checkpoint records the frozen
 * layers it stands on; a layer is removed once no checkpoint and not the
 * stack now stands on it. At close the session's processes are ended and its
 * changes written into the host directory (overlay-writeback.ts).
 */

import type { WorkspaceCopy } from "../../../core/checkpoint.js";
import type { CheckpointHost, CheckpointSupport } from "../../../core/checkpoint-support.js";
import type { Environment } from "../../../core/environment.js";
import { CheckpointError, UnsupportedError } from "../../../core/errors.js";
import { LocalCheckpoints, type LocalCheckpointHooks } from "../checkpoint.js";
import type { WorkspaceOptions } from "../workspace-config.js";
import type { WorkspaceOverlay } from "./overlay.js";
import { rescue, writeBack } from "./overlay-writeback.js";

export interface OverlayCheckpointHooks extends Omit<LocalCheckpointHooks, "endProcesses"> {
  /** Ends the session's processes; starts a new fast path unless `restartFastPath` is false. */
  endProcesses(restartFastPath?: boolean): Promise<void>;
  /** The session's overlay (valid once the transport started). */
  overlay(): WorkspaceOverlay | undefined;
  /** Stops the fast path, whose launcher holds its cwd in the workspace and so keeps the overlay from unmounting. */
  pauseFastPath(): void;
  resumeFastPath(): void;
}

export class OverlayCheckpoints implements CheckpointSupport {
  readonly #hooks: OverlayCheckpointHooks;
  readonly #shell: LocalCheckpoints;
  readonly #workspace: WorkspaceOptions;
  /** Each checkpoint's frozen layers, newest first. */
  readonly #chains = new Map<string, number[]>();
  /** The layers a rollback under way mounts once the processes are ended. */
  #restoring: number[] | undefined;

  constructor(workspace: WorkspaceOptions, hooks: OverlayCheckpointHooks) {
    this.#workspace = workspace;
    this.#hooks = hooks;
    this.#shell = new LocalCheckpoints(undefined, {
      ...hooks,
      endProcesses: async () => {
        if (this.#restoring === undefined) return hooks.endProcesses();
        // The fast path starts again only over the new mount: its launcher would hold the old one.
        await hooks.endProcesses(false);
        try {
          await this.#overlay().restore(this.#restoring);
        } finally {
          hooks.resumeFastPath();
        }
      },
    });
  }

  get workspaceRoot(): string {
    return this.#workspace.root;
  }

  #overlay(): WorkspaceOverlay {
    const overlay = this.#hooks.overlay();
    if (overlay === undefined)
      throw new CheckpointError("failed", "The session's sandbox holds no workspace overlay", { backend: "local" });
    return overlay;
  }

  async save(host: CheckpointHost, id: string, signal: AbortSignal | undefined): Promise<WorkspaceCopy> {
    this.#hooks.pauseFastPath();
    let frozen: Awaited<ReturnType<WorkspaceOverlay["freeze"]>>;
    try {
      frozen = await this.#overlay().freeze();
    } finally {
      this.#hooks.resumeFastPath();
      this.#hooks.prepareFastPath(host.paths.snapshot);
    }
    this.#chains.set(id, frozen.chain);
    try {
      await this.#shell.save(host, id, signal);
    } catch (error) {
      this.#chains.delete(id);
      throw error;
    }
    return { root: this.#workspace.root, bytes: frozen.bytes };
  }

  async restore(host: CheckpointHost, id: string, signal: AbortSignal | undefined): Promise<void> {
    const chain = this.#chains.get(id);
    if (chain === undefined)
      throw new CheckpointError("not_found", `Checkpoint ${id} has no layers left`, { backend: "local" });
    this.#restoring = chain;
    try {
      await this.#shell.restore(host, id, signal);
    } finally {
      this.#restoring = undefined;
      await this.#forget();
    }
  }

  async release(id: string): Promise<void> {
    this.#chains.delete(id);
    await this.#shell.release(id);
    await this.#forget();
  }

  /**
   * Refused: a copy of the live overlay made from the host would read, as root, what the sandbox's running
   * processes can swap for a link to the host's files, and carry their set-user-ID files out.
   */
  fork(): Promise<Environment> {
    return Promise.reject(
      new UnsupportedError(
        "fork of a sandboxed session with a workspace is not supported yet: its workspace is an overlay only its own sandbox mounts; fork without `workspace`, or without `sandbox`",
        { backend: "local" },
      ),
    );
  }

  /**
   * Ends the processes, then writes the session's changes into the host directory; the layers go with the
   * state dir.
   */
  async close(): Promise<void> {
    this.#chains.clear();
    await this.#shell.close();
    const overlay = this.#hooks.overlay();
    if (overlay === undefined) return;
    await this.#hooks.endProcesses(false);
    await overlay.endAllButInit();
    try {
      await writeBack(overlay.merged, overlay.root, overlay.layerDirs);
      overlay.saved();
    } catch (error) {
      // The layers go with the state dir: what the session made is copied whole beside the root first.
      throw await rescue(overlay, error);
    }
  }

  async #forget(): Promise<void> {
    await this.#overlay().forget([...this.#chains.values()].flat());
  }
}
