/**
 * What the SDK backends (Modal, Daytona) add to BoxTransport in the same
 * way: one sandbox object held between commands, a file sync through the
 * SDK's filesystem API whose failure is a warning, and a stop() that closes
 * the transport for good before it lets the sandbox go.
 */

import { BackendUnavailableError, SyncError } from "../../core/errors.js";
import { FileSync } from "../../sync/file-sync.js";
import type { NormalizedSyncConfig } from "../../sync/options.js";
import { messageOf } from "./error-message.js";
import { BoxTransport } from "./box-transport.js";
import { SdkTransfer, type SandboxWrite } from "./sdk-sync.js";

export interface SdkTransportOptions {
  /** Files and directories mirrored into the sandbox before commands. */
  sync?: NormalizedSyncConfig | undefined;
  warn: (message: string) => void;
}

export abstract class SdkTransport<Sandbox> extends BoxTransport {
  /** The file sync, when configured. */
  readonly fileSync: FileSync | undefined;
  /**
   * The SDK reports a call's exit apart from its output stream, which may still be on its way (a slow link, a
   * busy machine): the session waits this long for the end marker after the exit, unless the stream ends first.
   */
  readonly outputAfterExitMs = 10_000;
  /** The current sandbox: none before start, after stop, or once one ended and awaits its replacement. */
  protected sandbox: Sandbox | undefined;
  /** Set by stop(): no sandbox is made or woken after it. */
  protected closed = false;
  /** The provider's name in messages ("Modal"). */
  readonly #label: string;
  readonly #warn: (message: string) => void;

  protected constructor(name: string, label: string, options: SdkTransportOptions) {
    super(name);
    this.#label = label;
    this.#warn = options.warn;
    if (options.sync !== undefined) {
      const transfer = new SdkTransfer({
        writeFiles: async (files) => {
          const sandbox = this.sandbox;
          if (sandbox === undefined) throw new Error(`the ${label} sandbox is not running`);
          await this.writeFiles(sandbox, files);
        },
        exec: (script) => this.control(script),
      });
      this.fileSync = new FileSync(transfer, { ...options.sync, backend: name });
    }
  }

  /** Writes files whose parent directories exist, with the SDK's filesystem API. */
  protected abstract writeFiles(sandbox: Sandbox, files: readonly SandboxWrite[]): Promise<void>;

  /** Lets the sandbox go at stop() (terminate, delete or stop it). */
  protected abstract release(sandbox: Sandbox): Promise<void>;

  /** What release() does, for its error message: "terminate Modal sandbox sb-1". */
  protected abstract describeRelease(sandbox: Sandbox): string;

  /** Run once the sandbox was let go at stop(), whatever came of it (a fork's child gives back the image it started from). */
  afterStop: (() => Promise<void>) | undefined;

  async stop(): Promise<void> {
    try {
      await this.#stop();
    } finally {
      const after = this.afterStop;
      this.afterStop = undefined;
      await after?.().catch(() => undefined);
    }
  }

  async #stop(): Promise<void> {
    if (this.sandbox !== undefined) await this.killSession();
    this.closed = true;
    const sandbox = this.sandbox;
    this.sandbox = undefined;
    if (sandbox === undefined) return;
    try {
      await this.release(sandbox);
    } catch (error) {
      throw new BackendUnavailableError(`Could not ${this.describeRelease(sandbox)}: ${messageOf(error)}`, {
        cause: error,
        backend: this.name,
      });
    }
  }

  /**
   * Makes `sandbox` the session's (a rollback's new one, started from a snapshot) and lets the one it
   * replaces go; the session's processes there were ended already.
   */
  async swapIn(sandbox: Sandbox): Promise<void> {
    const old = this.sandbox;
    this.sandbox = sandbox;
    this.fileSync?.invalidate(); // another sandbox: its synced files are the snapshot's, not the sync's
    // The fast path the rollback started afresh starts its helper at the next call: in this sandbox.
    this.sandboxSwapped();
    if (old !== undefined) await this.discard(old).catch(() => undefined);
  }

  /** Forgets what the backend keeps about the sandbox that was swapped out (a process session). */
  protected sandboxSwapped(): void {}

  /** Lets a sandbox go for good: one a rollback replaced, or one that never became the session's. */
  abstract discard(sandbox: Sandbox): Promise<void>;

  /** Syncs files; a failure is a warning (the command still runs) and false. */
  protected async syncQuietly(): Promise<boolean> {
    try {
      await this.fileSync?.sync();
      return true;
    } catch (error) {
      if (!(error instanceof SyncError)) throw error;
      // Retried from scratch before the next command.
      this.#warn(error.message);
      return false;
    }
  }

  /** The sandbox a control exec runs in; there must be one. */
  protected runningSandbox(): Sandbox {
    if (this.sandbox === undefined)
      throw new BackendUnavailableError(`The ${this.#label} sandbox is not running`, { backend: this.name });
    return this.sandbox;
  }
}
