/**
 * The docker backend: one long-running container per session, every command
 * a `docker exec` of the wrapped script.
 *
 * Commands go through the Engine API over its unix socket (bench/docker.mjs:
 * it beats starting the `docker` CLI per call); containers are created with
 * the CLI, which takes the user's extra `docker run` arguments verbatim.
 * Forwarded host variables reach the container once, in the init exec's
 * request body: never on a command line, and never on a later exec (the
 * session snapshot carries them forward).
 */

import type { PortUrl } from "../../core/environment.js";
import type { CheckpointSupport } from "../../core/checkpoint-support.js";
import { publishedPortUrl } from "./ports.js";
import { BackendUnavailableError } from "../../core/errors.js";
import { MAX_INLINE_SCRIPT_BYTES } from "../../core/transport.js";
import type { KillSignal, ProcessHandle, RunOptions, Transport, TreeKill } from "../../core/transport.js";
import { EngineApi, defaultSocketPath } from "./engine.js";
import { DockerContainer } from "./container.js";
import { startExec } from "./exec.js";
import { DOCKER_TEMP_DIR, initEnv, type DockerTransportOptions } from "./config.js";
import {
  callMarks,
  CALL_MARK,
  markAssignments,
  newMarkValue,
  SESSION_MARK,
  type CallMarks,
} from "../../core/call-marks.js";
import { parseSweep, sweepScript, type SweepTarget } from "../../core/sweep-script.js";
import { WrapperPids } from "../shared/wrapper-pids.js";
import type { OwnerWatchdog } from "../shared/owner-watchdog.js";
import { containerWatchdog } from "./watchdog.js";
import type { FastCallHandle, FastPath } from "../../core/transport.js";
import type { FastPathRunner } from "../shared/fast-path/fast-path-runner.js";
import type { FastCall } from "../shared/fast-path/helper-client.js";
import { BoxCopies, boxFastPath } from "../shared/fast-path/box-fast-path.js";
import { SweepHits } from "../shared/sweep-hits.js";
import { dockerBox, execText } from "./fast-path.js";
import { redactingTrace } from "./engine-trace.js";
import { runStaged } from "./staged-script.js";
import { failable } from "./failable.js";

export class DockerTransport implements Transport {
  readonly name = "docker";
  readonly stdinMode = "pipe";
  readonly tempDir = DOCKER_TEMP_DIR;
  readonly needsRemotePid = true;
  /** Every container of one engine runs its login profile on the engine's CPU. */
  readonly initGroup: string;
  readonly #options: DockerTransportOptions;
  readonly #engine: EngineApi;
  readonly #container: DockerContainer;
  readonly #sessionMark = newMarkValue();
  readonly #marks = new WeakMap<ProcessHandle, CallMarks>();
  /** Wrappers of this session's calls (each leads its own session): close() takes their orphans. */
  readonly #leaders = new WrapperPids();
  /** Fast-path job groups that outlived their call: close() ends them whether or not the helper (their parent) runs. */
  readonly #endedGroups = new Set<number>();
  readonly #hits = new SweepHits();
  /** Removes the container if this process dies without close() (a kept one is meant to outlive it). */
  #watchdog: OwnerWatchdog | undefined;
  #fast: FastPathRunner | undefined;
  /** Aborted at stop(): the helper's copy must not outlive the session. */
  readonly #fastStop = new AbortController();
  /** The helper's path in the container, once copied there (close removes it from a kept container). */
  #helperPath: string | undefined;
  /** The session's copy of the helper: kept when endProcesses starts the fast path afresh. */
  #copies: BoxCopies | undefined;
  /**
   * Fails a call whose kill could not run in the container (paused, or gone): its wait() rejects with why,
   * since the call's own exit may never be reported (a paused container's processes are frozen).
   */
  readonly #fail = new WeakMap<ProcessHandle | FastCall, (error: unknown) => void>();
  /** Kill sweeps the engine refused (a paused container): tried again before the next call. */
  #pendingSweeps: SweepTarget[] = [];

  constructor(options: DockerTransportOptions) {
    this.#options = options;
    const trace = options.trace === undefined ? undefined : redactingTrace(options.trace);
    this.#engine = new EngineApi(options.socketPath ?? defaultSocketPath(), trace);
    this.initGroup = `docker:${options.socketPath ?? defaultSocketPath()}`;
    this.#container = new DockerContainer(options, this.#engine);
  }

  /** The container's full id; valid after start(). */
  get containerId(): string {
    return this.#container.id;
  }
  get containerName(): string {
    return this.#container.name;
  }

  async start(): Promise<void> {
    await this.#engine.ping();
    await this.#container.attach();
    this.#guard();
    try {
      await this.#container.assertWritable(this.tempDir);
    } catch (error) {
      // What this open created goes with it (Session.open stops the transport when a later step fails).
      await this.stop().catch(() => undefined);
      throw error;
    }
    this.#startFastPath();
  }

  /** The fast path, when it is on and its static helper was built; undefined: every call takes the plain path. */
  get fastPath(): FastPath | undefined {
    return this.#fast;
  }

  /** The fast path's runner (tests and benchmarks: readiness, killing the helper). */
  get fastPathRunner(): FastPathRunner | undefined {
    return this.#fast;
  }

  #startFastPath(): void {
    if (this.#options.fastPath === false) return;
    const box = dockerBox(this.#engine, () => this.#container.id, this.#fastStop.signal);
    this.#copies ??= new BoxCopies(box, this.tempDir, "the container");
    this.#fast = boxFastPath({
      box,
      copies: this.#copies,
      currentBox: () => (this.#container.gone === undefined ? this.#container.id : undefined),
      where: "the container",
      tempDir: this.tempDir,
      sessionMark: this.#sessionMark,
      keepsCopy: true,
      onCopied: (path) => (this.#helperPath = path),
      // A paused container freezes the helper with everything else: its call waits (to its timeout, whose
      // kill then says the container is paused), and the helper, state and all, is there after the unpause.
      frozen: () => this.#container.paused(),
      killGroups: (groups) => this.#sweep({ marks: [], groups }, "KILL", 0),
      adopt: (call) => this.#adoptFast(call),
      sweep: async (target, signal, graceMs, { call }) =>
        parseSweep(await this.#sweepFor(call, target, signal, graceMs)),
    });
  }

  /** A fast-path call whose wait() fails with why when its kill could not run in the container. */
  #adoptFast(call: FastCall): FastCallHandle {
    // A child without the session's mark (`env -i`) is found at close only by its group.
    void call.end.then((end) => end.groupLeft && call.pid !== undefined && this.#endedGroups.add(call.pid));
    const handle = { output: call.output, end: call.end, kill: () => call.kill(), wait: () => call.wait() };
    return this.#checked(call.stderr === undefined ? handle : { ...handle, stderr: call.stderr }, call);
  }

  /**
   * The handle with a wait() that asks the container when the call looks killed (a container that died shows up as
   * a killed process) and fails with why when its kill could not run there (see #fail).
   */
  #checked<H extends ProcessHandle>(handle: H, key?: FastCall): H {
    let checked: Promise<number> | undefined;
    const { failed, fail } = failable();
    const wait = handle.wait.bind(handle);
    const result: H = {
      ...handle,
      wait: () =>
        (checked ??= Promise.race([
          wait().then(
            async (code) => {
              if (code >= 128) await this.#container.assertRunning();
              return code;
            },
            async (error: unknown) => {
              throw await this.#container.explain(error, "start");
            },
          ),
          failed,
        ])),
    };
    // Keyed by what a kill's sweep names: the fast call, or the handle the session holds.
    this.#fail.set(key ?? result, fail);
    return result;
  }

  /** The owner watchdog's pid, while the session is open. */
  get watchdogPid(): number | undefined {
    return this.#watchdog?.pid;
  }

  #guard(): void {
    this.#watchdog?.release();
    this.#watchdog = containerWatchdog(this.#options, this.#container.id);
  }

  /**
   * A container that died since the last call is replaced before the next
   * one, unless it is meant to persist: then the caller is told it is gone.
   */
  async beforeExecute(): Promise<"restarted" | undefined> {
    if (this.#container.gone === undefined) {
      await this.#retrySweeps();
      return undefined;
    }
    this.#pendingSweeps = [];
    if (this.#options.keepContainer)
      throw new BackendUnavailableError(this.#container.goneMessage(), { backend: this.name });
    await this.#container.remove().catch(() => undefined);
    // The helper went with the old container: the new one gets its own copy.
    this.#fast?.killHelper();
    this.#helperPath = undefined;
    await this.#container.attach();
    this.#guard();
    return "restarted";
  }

  runBash(script: string, options: RunOptions): ProcessHandle {
    const marks = callMarks(this.#sessionMark);
    const staged = { engine: this.#engine, containerId: this.#container.id, tempDir: this.tempDir };
    const handle =
      Buffer.byteLength(script) > MAX_INLINE_SCRIPT_BYTES
        ? runStaged({ ...staged, exec: (line, o) => this.#exec(line, o, marks) }, script, options)
        : this.#exec(script, options, marks);
    const result = this.#checked({
      output: this.#leaders.watch(handle.output),
      ...(handle.stderr === undefined ? {} : { stderr: handle.stderr }),
      kill: () => handle.kill(),
      wait: () => handle.wait(),
    });
    this.#marks.set(result, marks);
    return result;
  }

  #exec(script: string, options: RunOptions, marks: CallMarks): ProcessHandle {
    const bash = ["bash", "-c", script];
    // cleanEnv: the snapshot is the whole truth about the environment, so the
    // container's own variables must not come back behind an `unset`. The
    // marks go on env's command line, so the waiter (exec.ts) never carries them.
    const cmd = ["env", ...(options.cleanEnv ? ["-i"] : []), ...markAssignments(marks), ...bash];
    return startExec(this.#engine, {
      containerId: this.#container.id,
      cmd,
      reportExit: true,
      env: options.cleanEnv ? undefined : initEnv(this.#options),
      stdin: options.stdin,
      separateStreams: options.separateStreams,
    });
  }

  /**
   * The shared sweep inside the container: the wrapper (first, alone), its
   * descendants, its group and session when it leads them (exec.ts runs it
   * under setsid where the image has it), and everything carrying the call's mark.
   */
  async killTree(handle: ProcessHandle, { signal, remotePid, remoteStartTime, graceMs }: TreeKill): Promise<boolean> {
    const fast = this.#fast?.kill(handle, signal, graceMs);
    if (fast !== undefined) return fast;
    const marks = this.#marks.get(handle);
    if (remotePid === undefined && marks === undefined) {
      handle.kill();
      return false;
    }
    const leaders = remotePid === undefined ? [] : [remotePid];
    const marked = marks === undefined ? [] : [`${CALL_MARK}=${marks.call}`];
    const target = { marks: marked, root: remotePid, rootStartTime: remoteStartTime };
    const sweep = await this.#hits.sweep(handle, { ...target, groups: leaders, sessions: leaders }, async (withHits) =>
      parseSweep(await this.#sweepFor(handle, withHits, signal, graceMs)),
    );
    if (remotePid === undefined) handle.kill();
    return sweep.clean && remotePid !== undefined;
  }

  /** The kills a paused container refused, now that it may run them; one the engine still refuses stays pending. */
  async #retrySweeps(): Promise<void> {
    const targets = this.#pendingSweeps.splice(0);
    for (const target of targets)
      await this.#sweep(target, "KILL", 0).catch(() => {
        this.#pendingSweeps.push(target);
      });
  }

  /** A call's kill sweep; when the engine refuses it, the call fails with why (the error is thrown too). */
  async #sweepFor(
    call: ProcessHandle | FastCall,
    target: SweepTarget,
    signal: KillSignal,
    graceMs: number,
  ): Promise<string> {
    try {
      return await this.#sweep(target, signal, graceMs);
    } catch (error) {
      this.#pendingSweeps.push(target);
      const explained = await this.#container.explain(error, "kill");
      if (explained instanceof BackendUnavailableError) this.#fail.get(call)?.(explained);
      throw explained;
    }
  }

  async #sweep(target: SweepTarget, signal: KillSignal, graceMs: number): Promise<string> {
    return (await execText(this.#engine, this.#container.id, ["bash", "-c", sweepScript(target, signal, graceMs)]))
      .text;
  }

  /** What every process of the session is found by: its mark, and the groups and sessions its calls led. */
  #sessionTarget(): SweepTarget {
    const leaders = this.#leaders.all;
    const marks = [`${SESSION_MARK}=${this.#sessionMark}`];
    return { marks, sessions: leaders, groups: [...leaders, ...this.#endedGroups], deadLeadersOnly: true };
  }

  /**
   * Ends the session's processes in the container (what close() ends in a kept one) and restarts the fast
   * path: a rollback's step before it swaps the files in (docs/branching.md).
   */
  async endProcesses(): Promise<void> {
    this.#fast?.stop();
    this.#fast = undefined;
    await this.#sweep(this.#sessionTarget(), "KILL", 0);
    this.#startFastPath();
  }

  /** Set by open.ts: what goes once the container is gone (the images a fork committed). */
  afterStop: (() => Promise<void>) | undefined;
  /** Set by open.ts (checkpoint.ts): checkpoints, rollback and fork. */
  checkpoints: CheckpointSupport | undefined;

  portUrl(port: number): Promise<PortUrl> {
    return publishedPortUrl(this.#engine, this.#container, port);
  }

  async stop(): Promise<void> {
    // The helper and its launcher first: nothing new may start while the session's processes are killed.
    this.#fast?.stop();
    this.#fastStop.abort();
    this.#fast = undefined;
    const helper = this.#helperPath;
    this.#helperPath = undefined;
    try {
      // A kept container outlives the session: what the session started must not, nor the helper's copy.
      if (this.#options.keepContainer && this.#container.id !== "" && this.#container.gone === undefined) {
        await this.#sweep(this.#sessionTarget(), "KILL", 0).catch(() => undefined);
        const dir = helper?.slice(0, helper.lastIndexOf("/"));
        if (dir) await execText(this.#engine, this.#container.id, ["rm", "-rf", dir]).catch(() => undefined);
      }
      if (!this.#options.keepContainer) await this.#container.remove();
      // Released only once the container is gone: one the engine could not remove is removed when this process exits.
      this.#watchdog?.release();
      this.#watchdog = undefined;
    } finally {
      this.#engine.close();
      await this.afterStop?.().catch(() => undefined);
    }
  }
}
