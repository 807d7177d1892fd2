/**
 * The bookkeeping every Environment keeps the same way, whoever runs the
 * session model: the id, paths, cwd and snapshot flag behind the getters and
 * state(), the beforeClose hooks, and a close() that runs once.
 *
 * Written once so `Session` (this process) and the gateway client cannot
 * drift apart on the parts callers rely on: hooks run before anything stops,
 * so they can still execute commands; a failing hook does not keep the
 * backend alive; closing twice, or twice at once, closes once.
 */

import {
  normalizeExecuteOptions,
  type Environment,
  type ExecuteOptions,
  type ExecuteResult,
  type SessionPaths,
  type SessionState,
} from "./environment.js";
import { SessionClosedError, UnsupportedError } from "./errors.js";
import { Branches } from "./branches.js";
import type { Checkpoint, CheckpointOptions, ForkOptions, RollbackOptions } from "./checkpoint.js";
import { shellString } from "./options.js";
import type { Transport } from "./transport.js";
import type { ProcessAttachRequest, ProcessChannel } from "./process-channel.js";
import type { HelperInstaller } from "./session-options.js";

type CloseHook = () => Promise<void> | void;

/** Where a backend's commands act (Transport declares both). */
export type HostTraits = Pick<Transport, "actsOnHost" | "sharesHostFiles" | "checkpoints" | "fastPath" | "boxId">;

export abstract class EnvironmentBase implements Environment {
  abstract readonly backend: string;
  readonly #id: string;
  readonly #paths: SessionPaths;
  /** The timeout of a command that names none. */
  readonly #defaultTimeoutMs: number;
  #cwd: string;
  #snapshotReady: boolean;
  #closed = false;
  readonly #closeHooks = new Set<CloseHook>();
  #closing: Promise<void> | undefined;

  readonly #secretValues: readonly string[];
  readonly #branches: Branches;
  readonly #installHelper: HelperInstaller | undefined;
  /** The session's one helper copy, once asked for (a failed install is tried again next time). */
  #helper: { box: string | undefined; path: Promise<string> } | undefined;

  /** What the backend says of the machine its commands run on; each is false unless it says so. */
  protected host(): HostTraits {
    return {};
  }

  get actsOnHost(): boolean {
    return this.host().actsOnHost === true;
  }

  get sharesHostFiles(): boolean {
    return this.host().sharesHostFiles === true;
  }

  protected constructor(
    state: SessionState,
    paths: SessionPaths,
    defaultTimeoutMs: number,
    secretValues: readonly string[] = [],
    installHelper?: HelperInstaller,
  ) {
    this.#installHelper = installHelper;
    this.#secretValues = Object.freeze([...secretValues]);
    this.#id = state.sessionId;
    this.#cwd = state.cwd;
    this.#snapshotReady = state.snapshotReady;
    this.#paths = paths;
    this.#defaultTimeoutMs = defaultTimeoutMs;
    // The environment itself is the owner: its getters are read live.
    this.#branches = new Branches(
      this,
      (cwd) => this.setCwd(cwd),
      () => this.host().checkpoints,
    );
    // Every call is counted from entry to return, whoever implements execute, so
    // a checkpoint is refused beside one and a call waits for a rollback.
    const execute = this.execute.bind(this);
    (this as { execute: Environment["execute"] }).execute = (command, options) =>
      this.#branches.around(options, () => execute(command, options));
  }

  get id(): string {
    return this.#id;
  }
  get cwd(): string {
    return this.#cwd;
  }
  get snapshotReady(): boolean {
    return this.#snapshotReady;
  }
  get closed(): boolean {
    return this.#closed;
  }
  get paths(): SessionPaths {
    return this.#paths;
  }
  get secretValues(): readonly string[] {
    return this.#secretValues;
  }

  state(): SessionState {
    return { sessionId: this.#id, cwd: this.#cwd, snapshotReady: this.#snapshotReady };
  }

  abstract execute(command: string, options?: ExecuteOptions): Promise<ExecuteResult>;

  /** The workspace root checkpoints copy, when one was declared (docs/branching.md). */
  get workspaceRoot(): string | undefined {
    return this.#branches.workspaceRoot;
  }

  checkpoint(options?: CheckpointOptions): Promise<Checkpoint> {
    return this.#branches.checkpoint(options);
  }

  rollback(checkpoint: Checkpoint, options?: RollbackOptions): Promise<void> {
    return this.#branches.rollback(checkpoint, options);
  }

  fork(options: ForkOptions): Promise<Environment[]> {
    return this.#branches.fork(options);
  }

  checkpoints(): Checkpoint[] {
    return this.#branches.list();
  }

  releaseCheckpoint(checkpoint: Checkpoint): Promise<void> {
    return this.#branches.releaseCheckpoint(checkpoint);
  }

  /**
   * The session's one helper in the backend (Environment.helperPath): the
   * fast path's copy when it has one, else the installer's, made once.
   */
  helperPath(): Promise<string> {
    if (this.#closed) return Promise.reject(new SessionClosedError());
    const box = this.host().boxId;
    // A copy made in a box that was replaced since (a lost sandbox, a rollback) is gone with it.
    if (this.#helper !== undefined && this.#helper.box === box) return this.#helper.path;
    const path = this.#findHelper();
    const helper = { box, path };
    this.#helper = helper;
    path.catch(() => {
      if (this.#helper === helper) this.#helper = undefined;
    });
    return path;
  }

  /** A live line to a process of this session through its fast-path helper, when it runs (Environment.attachProcess). */
  attachProcess(request: ProcessAttachRequest): ProcessChannel | undefined {
    if (this.#closed) return undefined;
    return this.host().fastPath?.attach?.(request);
  }

  /** The backend was replaced (its files are gone): the next helperPath() finds the new one's copy. */
  protected forgetHelper(): void {
    this.#helper = undefined;
  }

  async #findHelper(): Promise<string> {
    const copied = await this.host().fastPath?.helperPath?.();
    if (copied !== undefined) return copied;
    if (this.#installHelper === undefined)
      throw new UnsupportedError(`The ${this.backend} backend cannot install the helper`, { backend: this.backend });
    return this.#installHelper(this);
  }

  /**
   * What every execute() checks before it runs anything, in the same order
   * whoever runs the session: the command, its options (normalised, with the
   * default timeout filled in), then that the environment is still open.
   */
  protected checkExecute(command: string, options: ExecuteOptions): ReturnType<typeof normalizeExecuteOptions> {
    shellString("command", command, { allowEmpty: true });
    const normalized = normalizeExecuteOptions(options, this.#defaultTimeoutMs);
    if (this.#closed) throw new SessionClosedError();
    return normalized;
  }

  /**
   * Runs `hook` when the environment closes, before anything stops, so the
   * hook can still execute commands (the tools' process registry kills the
   * session's background processes this way). Returns a function that removes it.
   */
  beforeClose(hook: CloseHook): () => void {
    this.#closeHooks.add(hook);
    return () => this.#closeHooks.delete(hook);
  }

  /** Runs the close hooks, then shuts the implementation down. Every later call gets the first call's promise. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    if (this.#closed) return;
    const hooks = [...this.#closeHooks];
    this.#closeHooks.clear();
    // A failing hook must not keep the backend running.
    await Promise.allSettled(hooks.map(async (hook) => hook()));
    this.#closed = true;
    // Before the backend stops: a checkpoint's files may live inside it.
    await this.#branches.close().catch(() => undefined);
    await this.shutdown();
  }

  /** What closing means for the implementation; runs once, after the hooks, with `closed` already true. */
  protected abstract shutdown(): Promise<void>;

  protected setCwd(cwd: string): void {
    this.#cwd = cwd;
  }

  protected setSnapshotReady(ready: boolean): void {
    this.#snapshotReady = ready;
  }

  /** For a session found gone elsewhere: later calls fail and close() has nothing left to do. */
  protected markClosed(): void {
    this.#closed = true;
  }
}
