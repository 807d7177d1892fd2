/**
 * The session: the only place that knows the snapshot model.
 *
 * Every command is a fresh `bash -c` built by script.ts; state (env and cwd
 * together) lives in one snapshot file inside the backend. The session owns
 * the per-call secret that keys the end marker, each call's limits (its
 * output, timeout and interrupt are collect-call.ts's), the login fallback, and the rule for overlapping calls: each
 * starts from the state as it was when it started, and the one that finishes
 * last sets env and cwd (one file renamed into place, so nothing is ever
 * half-written or torn).
 */

import { isShellwrightError, SessionClosedError, SpawnError, UnsupportedError } from "./errors.js";
import { MarkerScanner } from "./marker.js";
import { buildCommandScript, pendingPaths, sessionPaths, type ScriptPlan } from "./script.js";
import { describeSaveFailure } from "./marker-payload.js";
import type { SessionOptions } from "./session-options.js";
import type { ProcessHandle, RunOptions, Transport } from "./transport.js";
import { expandsShellPid } from "./shell-pid.js";
import { buildFastCallScript } from "./fast-script.js";
import { checkPort, type ExecuteOptions, type ExecuteResult, type PortUrl } from "./environment.js";
import { EnvironmentBase, type HostTraits } from "./environment-base.js";
import { collectCall, type CallLimits, type CollectSettings, type RunOutcome } from "./collect-call.js";
import { initSession } from "./session-init.js";
import { newId, newSecret, withSecret } from "./call-secret.js";
import { FastEndDetector, fastEndState } from "./fast-end-detector.js";
import { withInitSlot } from "./init-gate.js";

/** A fast-path call whose launcher died as it started: it may have run, and is not run again. */
const MAYBE_RAN =
  "[shellwright: the session's launcher died while this command was starting; it may or may not have run, and it was not run again]";

/** A plain-path call's limits. */
interface RunLimits extends CallLimits {
  /** The call's secret: only an end marker keyed by it completes the call. */
  secret: string;
}

export class Session extends EnvironmentBase {
  readonly #transport: Transport;
  readonly #options: SessionOptions;
  readonly #running = new Set<AbortController>();
  /** The backend clock of the latest remote commit applied to `cwd`. */
  #lastCommit = 0;
  /**
   * An init that ran out of time (a loaded machine, a login profile waiting
   * on a lock) is tried once more, at the next call, before the session gives
   * up on its snapshot for good: "due" until a call starts it, then the retry
   * every call that arrives meanwhile waits for.
   */
  #initRetry: "due" | Promise<void> | undefined;

  private constructor(transport: Transport, options: SessionOptions) {
    const id = options.resume?.sessionId ?? newId();
    super(
      { sessionId: id, cwd: options.resume?.cwd ?? options.cwd, snapshotReady: options.resume?.snapshotReady ?? false },
      sessionPaths(transport.tempDir, id),
      options.timeoutMs,
      options.secretValues,
      options.installHelper,
    );
    this.#transport = transport;
    this.#options = options;
  }

  /** Starts the transport and captures the snapshot (unless resuming). */
  static async open(transport: Transport, options: SessionOptions): Promise<Session> {
    await transport.start();
    const session = new Session(transport, options);
    if (options.resume?.snapshotReady === true) transport.fastPath?.prepare(session.paths.snapshot);
    if (options.resume === undefined) {
      try {
        await session.#init();
      } catch (error) {
        await transport.stop().catch(() => undefined);
        throw error;
      }
    }
    return session;
  }

  get backend(): string {
    return this.#transport.name;
  }

  protected override host(): HostTraits {
    return this.#transport;
  }

  /**
   * Internal (the pool's): resolves true once the next call would take the
   * fast path, false when it never will or the backend cannot say. Not part
   * of the Environment contract: a gateway's session has no such thing.
   */
  async whenFastPathReady(): Promise<boolean> {
    if (!this.snapshotReady || this.closed) return false;
    return (await this.#transport.fastPath?.whenReady?.()) === true;
  }

  /** Internal (the pool's): how many of this session's fast-path helpers have died; undefined without a fast path. */
  fastPathHelperExits(): number | undefined {
    return this.#transport.fastPath?.helperExits;
  }

  async execute(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    const started = performance.now();
    const { cwd, timeoutMs, stdin, signal, onOutput, isolated, separateStreams, onStdout, onStderr } =
      this.checkExecute(command, options);
    const apart = (stdout: string | undefined, stderr: string | undefined) =>
      separateStreams ? { stdout: stdout ?? "", stderr: stderr ?? "" } : {};

    if (signal?.aborted) {
      return {
        output: "[Command interrupted]",
        exitCode: 130,
        cwd: this.cwd,
        timedOut: false,
        interrupted: true,
        truncated: false,
        durationMs: 0,
        ...apart("", ""),
      };
    }
    if ((await this.#transport.beforeExecute?.()) === "restarted") {
      this.setSnapshotReady(false);
      this.forgetHelper();
      this.setCwd(this.#options.cwd);
      await this.#init();
    } else if (this.#initRetry !== undefined) {
      if (this.#initRetry === "due") this.#initRetry = this.#init(true).finally(() => (this.#initRetry = undefined));
      await this.#initRetry;
    }

    const ready = this.snapshotReady;
    const userStdin = stdin === undefined || stdin.length === 0 ? undefined : stdin;
    const limits = { timeoutMs, signal, onOutput, separateStreams, onStdout, onStderr };
    const fast = ready ? await this.#runFast(command, cwd, userStdin, limits, isolated) : undefined;
    let outcome: RunOutcome;
    let newCwd: string | undefined;
    if (fast !== undefined) {
      // The helper committed already (an isolated call: nothing): no pending file to move or remove.
      outcome = fast;
      newCwd = fast.marker?.committed === true && !isolated ? fast.marker.cwd : undefined;
    } else {
      const callId = newId();
      outcome = await this.#runPlain(command, cwd, userStdin, callId, ready, isolated, {
        ...limits,
        secret: newSecret(),
      });
      newCwd = this.#settle(outcome, callId, ready && !isolated);
    }
    if (newCwd) this.setCwd(newCwd);

    let output = outcome.text;
    const saveFailed = outcome.marker?.saveFailed;
    if (saveFailed !== undefined)
      output = appendNotice(
        output,
        `[shellwright: this call's state could not be saved: ${saveFailed}; the session keeps the state it had before this call]`,
      );
    if (outcome.timedOut) output = appendNotice(output, `[Command timed out after ${formatSeconds(timeoutMs)}s]`);
    else if (outcome.interrupted) output = appendNotice(output, "[Command interrupted]");
    return {
      output,
      exitCode: outcome.exitCode,
      cwd: this.cwd,
      timedOut: outcome.timedOut,
      interrupted: outcome.interrupted,
      truncated: outcome.truncated,
      durationMs: Math.round(performance.now() - started),
      ...apart(outcome.stdout, outcome.stderr),
    };
  }

  /**
   * The call on the backend's fast path (docs/fast-path.md), when it has one
   * that takes it now; undefined: run it on the plain path. The helper has
   * committed the state already when the outcome says so.
   */
  async #runFast(
    command: string,
    cwd: string | undefined,
    stdin: Uint8Array | undefined,
    limits: CallLimits,
    isolated: boolean,
  ): Promise<RunOutcome | undefined> {
    const fastPath = this.#transport.fastPath;
    // `$$` is the launcher's pid on the fast path: `kill $$` must end the call, as in a terminal.
    if (fastPath === undefined || expandsShellPid(command)) return undefined;
    const script = buildFastCallScript({
      command,
      cwd: cwd ?? this.cwd,
      knownCwd: this.cwd,
      sessionCwd: cwd === undefined,
      isolated,
    });
    const handle = fastPath.tryRun({
      snapshot: this.paths.snapshot,
      script,
      ...(stdin === undefined ? {} : { stdin }),
      ...(limits.separateStreams === true ? { separateStreams: true } : {}),
    });
    if (handle === undefined) return undefined;
    const controller = new AbortController();
    this.#running.add(controller);
    let outcome: RunOutcome;
    try {
      outcome = await collectCall(
        this.#transport,
        handle,
        this.#options,
        limits,
        controller.signal,
        new FastEndDetector(handle),
        // stderr, when apart, ends with the call as stdout does: at the helper's report.
        new FastEndDetector(handle),
      );
    } finally {
      this.#running.delete(controller);
    }
    const end = await Promise.race([handle.end, Promise.resolve(undefined)]);
    if (end === undefined) return outcome;
    if (end.uncertain === true && !outcome.timedOut && !outcome.interrupted) {
      // Running it again could run it twice: say so instead.
      return {
        ...outcome,
        text: outcome.text === "" ? MAYBE_RAN : `${outcome.text}\n${MAYBE_RAN}`,
        exitCode: 125,
        marker: { committed: false },
      };
    }
    if (!end.started && !end.killed && !outcome.timedOut && !outcome.interrupted) return undefined;
    // A stop that came after the job had finished by itself: the call completed (and may have committed).
    if ((outcome.timedOut || outcome.interrupted) && end.started && !end.killed && end.status < 128) {
      return {
        ...outcome,
        exitCode: end.status,
        timedOut: false,
        interrupted: false,
        marker: fastEndState(end) ?? { committed: false },
      };
    }
    return outcome;
  }

  async #runPlain(
    command: string,
    cwd: string | undefined,
    userStdin: Uint8Array | undefined,
    callId: string,
    ready: boolean,
    isolated: boolean,
    limits: RunLimits,
  ): Promise<RunOutcome> {
    const { secret } = limits;
    // The secret travels as the first line of stdin: never in argv or the environment.
    const stdinBytes = withSecret(secret, userStdin);
    const embedded = this.#transport.stdinMode === "heredoc";
    const script = buildCommandScript({
      ...this.#plan(callId),
      command,
      cwd: cwd ?? this.cwd,
      knownCwd: this.cwd,
      sessionCwd: cwd === undefined,
      snapshotReady: ready,
      stdinOnPipe: userStdin !== undefined,
      reportPid: this.#transport.needsRemotePid === true,
      isolated,
      ...(embedded ? { embeddedStdin: stdinBytes } : {}),
      ...(limits.separateStreams === true ? { separateStreams: true } : {}),
    });
    return this.#run(
      script,
      // The inner shell is the login shell after a failed init; the outer one never is.
      {
        cleanEnv: ready,
        ...(embedded ? {} : { stdin: stdinBytes }),
        ...(limits.separateStreams === true ? { separateStreams: true } : {}),
      },
      limits,
    );
  }

  /** Where this process reaches `port` of the backend (Environment.portUrl), as the transport gives it. */
  async portUrl(port: number): Promise<PortUrl> {
    checkPort(port);
    if (this.closed) throw new SessionClosedError();
    if (this.#transport.portUrl === undefined)
      throw new UnsupportedError(`The ${this.backend} backend gives no URL for a port`, { backend: this.backend });
    return this.#transport.portUrl(port);
  }

  /** After the close hooks: interrupts running commands, removes the session's files and stops the backend. */
  protected override async shutdown(): Promise<void> {
    for (const controller of this.#running) controller.abort();
    const files = this.#transport.files;
    files?.remove(this.paths.snapshot);
    files?.remove(this.paths.cwdFile);
    await this.#transport.stop();
  }

  #plan(callId: string): ScriptPlan {
    return { sessionId: this.id, paths: this.paths, callId, renameInScript: this.#transport.files === undefined };
  }

  async #init(retried = false): Promise<void> {
    const result = await withInitSlot(this.#transport.initGroup, () =>
      initSession(
        {
          transport: this.#transport,
          sessionId: this.id,
          paths: this.paths,
          options: this.#options,
          plan: (callId) => this.#plan(callId),
          run: (script, runOptions, limits, settings) => this.#run(script, runOptions, limits, settings),
          settle: (outcome, callId, dumped) => this.#settle(outcome, callId, dumped),
        },
        retried,
      ),
    );
    if (result === undefined) return;
    if ("retry" in result) {
      this.#initRetry = "due";
      return;
    }
    this.setCwd(result.cwd);
    this.setSnapshotReady(true);
    this.#transport.fastPath?.prepare(this.paths.snapshot);
  }

  /**
   * Commits a finished call's state and returns the session's cwd after it.
   * The snapshot is one file holding env and cwd, so they never tear. Where
   * Node renames (local), it does so here, in the order calls finish; where
   * the outer shell renamed (remote), the cwd of the latest rename by the
   * backend's clock wins. A call that did not commit leaves no trace.
   */
  #settle(outcome: RunOutcome, callId: string, dumpedSnapshot: boolean): string | undefined {
    const files = this.#transport.files;
    const pending = pendingPaths(this.paths, callId);
    const marker = outcome.marker;
    if (!marker?.committed) {
      files?.remove(pending.snapshot);
      return undefined;
    }
    if (files) {
      // Not moved into place: the cwd is not committed either (all of the state, or none of it).
      if (dumpedSnapshot && !files.rename(pending.snapshot, this.paths.snapshot)) {
        files.remove(pending.snapshot);
        outcome.marker = { committed: false, saveFailed: describeSaveFailure("rename") };
        return undefined;
      }
      if (!dumpedSnapshot) files.remove(pending.snapshot);
    } else if (marker.stamp !== undefined) {
      if (marker.stamp < this.#lastCommit) return undefined;
      this.#lastCommit = marker.stamp;
    }
    return marker.cwd || undefined;
  }

  async #run(
    script: string,
    runOptions: RunOptions,
    limits: RunLimits,
    settings?: Partial<CollectSettings>,
  ): Promise<RunOutcome> {
    let handle: ProcessHandle;
    try {
      handle = this.#transport.runBash(script, { ...runOptions, timeoutMs: limits.timeoutMs });
    } catch (error) {
      if (isShellwrightError(error)) throw error;
      throw new SpawnError(`Could not start bash on the ${this.#transport.name} backend: ${String(error)}`, {
        cause: error,
        backend: this.#transport.name,
      });
    }
    const controller = new AbortController();
    this.#running.add(controller);
    const scanner = new MarkerScanner(limits.secret, {
      expectPid: this.#transport.needsRemotePid === true,
      sessionId: this.id,
    });
    // Apart, stderr ends with a marker of its own, keyed by the same secret (script.ts).
    const stderrScanner = runOptions.separateStreams === true ? new MarkerScanner(limits.secret) : undefined;
    try {
      const collect = settings === undefined ? this.#options : { ...this.#options, ...settings };
      return await collectCall(this.#transport, handle, collect, limits, controller.signal, scanner, stderrScanner);
    } finally {
      this.#running.delete(controller);
    }
  }
}

function appendNotice(output: string, notice: string): string {
  return output === "" ? notice : `${output}\n${notice}`;
}

function formatSeconds(ms: number): string {
  return String(Math.round(ms / 10) / 100);
}
