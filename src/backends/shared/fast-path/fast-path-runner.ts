/**
 * The fast path's lifecycle for one session, the same on every backend
 * (docs/fast-path.md): it starts the helper in the background, hands calls
 * to it while it is alive, and answers "undefined: use the plain path"
 * whenever it is not: never started, could not start, died. A dead helper
 * is started again in the background, after a delay that grows with each
 * failure in a row. Each call gets its own mark (the job exports it first)
 * and a kill is the helper's `K` frame first, so a killed call never
 * commits, then the backend's sweep of the call's mark, job group and tree,
 * with what earlier rounds of it hit. A backend is a small channel: how to
 * start its helper, how to run a sweep and kill a group where the jobs are,
 * and what to track of a call.
 */

import { CALL_MARK, callMarks, type CallMarks } from "../../../core/call-marks.js";
import type { SweepResult, SweepTarget } from "../../../core/sweep-script.js";
import type { FastCallHandle, FastCallRequest, FastPath, KillSignal } from "../../../core/transport.js";
import type { ProcessAttachRequest, ProcessChannel } from "../../../core/process-channel.js";
import { settledWithin } from "../../../core/settled-within.js";
import { SweepHits } from "../sweep-hits.js";
import { markedJob } from "./helper-argv.js";
import type { FastCall } from "./helper-client.js";
import { HelperClient, type HelperFailure, type HelperStream } from "./helper-client.js";
import { defaultWarn, warnUnavailable } from "./unavailable.js";
import { MAX_RUN_BYTES } from "./protocol.js";

/** A call the runner handed out: the helper's call, its marks, and the handle the session holds. */
export interface RunningCall {
  call: FastCall;
  marks: CallMarks;
  handle: FastCallHandle;
}

export interface FastPathHost {
  /** The session's mark, which every call's own mark goes with. */
  sessionMark: string;
  /** Starts the helper for this snapshot (copying it in first where needed); throws or returns undefined when it cannot. */
  start(snapshot: string): HelperStream | undefined;
  /** KILL for a started job's group whose helper died (the call's kill guarantees), where the jobs run. */
  killGroup(pid: number): void;
  /**
   * True: a call waits in the helper while it starts (local and ssh, where
   * that takes milliseconds). False: until it is ready calls take the plain
   * path (a box or container, where copying it in takes longer than an exec).
   */
  queueWhileStarting: boolean;
  /** What the job runs before the command (ssh: record its group on the host). */
  jobPrologue?: string | undefined;
  /** The backend's bookkeeping of a new call (groups, a wait that checks the box); returns the handle the session gets. */
  adopt?(call: FastCall, marks: CallMarks): FastCallHandle;
  /**
   * Runs the sweep (core/sweep-script.ts) where the jobs run, once the helper has signalled the job's group. It
   * throws or says not clean when it could not run.
   */
  sweep(target: SweepTarget, signal: KillSignal, graceMs: number, running: RunningCall): Promise<SweepResult>;
  /** Told once per failure why the helper was given up (default: a process warning). */
  warn?(message: string): void;
  /** The helper's path where the jobs run, once it is there (FastPath.helperPath); undefined: none. */
  helperPath?(): Promise<string | undefined>;
}

export { FAST_PATH_WARNING } from "./unavailable.js";

/** First wait before starting a helper again after a failure; it doubles up to the maximum. */
export const RESTART_DELAY_MS = 200;
export const MAX_RESTART_DELAY_MS = 30_000;

/** After a KILL, how long a job gets to be reported ended before the last sweep runs anyway (a helper gone meanwhile). */
const KILL_SETTLE_MS = 5000;

export class FastPathRunner implements FastPath {
  readonly #options: FastPathHost;
  readonly #calls = new WeakMap<object, RunningCall>();
  readonly #hits = new SweepHits();
  #client: HelperClient | undefined;
  #snapshot: string | undefined;
  #failures = 0;
  #retryAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #exits = 0;

  constructor(options: FastPathHost) {
    this.#options = options;
  }

  /** True while a helper is running (whether or not its launcher is ready yet). */
  get running(): boolean {
    return this.#client?.alive === true;
  }

  /** True while a helper's launcher is ready (or restarting after a state change, with requests queued for it). */
  get ready(): boolean {
    return this.#client?.alive === true && this.#client.ready;
  }

  /** Helpers that died (their stream closed) while this runner still used them; a stop() is not counted. */
  get helperExits(): number {
    return this.#exits;
  }

  /** Run requests the current helper's stream took (tests: a call that may have run, as against one never sent). */
  get requestsSent(): number {
    return this.#client?.requestsSent ?? 0;
  }

  /** Calls the current helper runs now (tests: an attached process holds none). */
  get openCalls(): number {
    return this.#client?.openCalls ?? 0;
  }

  /** True once stop() ended this runner (its helper's exit was asked for, not a failure). */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Resolves true once a helper's launcher is ready (tests and benchmarks). */
  async whenReady(): Promise<boolean> {
    return (await this.#client?.firstReady) === true;
  }

  /** The helper's path where the jobs run (the session's one copy), or undefined when the backend has none. */
  async helperPath(): Promise<string | undefined> {
    if (this.#stopped || this.#options.helperPath === undefined) return undefined;
    // Only a copy that ran: one that never got ready (a noexec temp dir) is the installer's case, whose error says why.
    if (!(await this.whenReady())) return undefined;
    return this.#stopped ? undefined : this.#options.helperPath();
  }

  prepare(snapshot: string): void {
    this.#snapshot = snapshot;
    if (this.#stopped || this.running || this.#timer !== undefined) return;
    if (Date.now() < this.#retryAt) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.prepare(snapshot);
      }, this.#retryAt - Date.now());
      this.#timer.unref();
      return;
    }
    this.#launch(snapshot);
  }

  tryRun(request: FastCallRequest): FastCallHandle | undefined {
    if (!this.#options.queueWhileStarting && !this.ready) {
      if (!this.running) this.prepare(request.snapshot);
      return undefined;
    }
    const marks = callMarks(this.#options.sessionMark);
    const prologue = this.#options.jobPrologue;
    const call = this.#run(
      request,
      // One line: the command's line numbers count from 1 (buildLauncherScript).
      markedJob(marks.call, prologue ? `${prologue}; ${request.script}` : request.script),
    );
    if (call === undefined) return undefined;
    const handle = this.#options.adopt?.(call, marks) ?? call;
    this.#calls.set(handle, { call, marks, handle });
    return handle;
  }

  /**
   * A live line to a process one of this helper's calls started (Environment.attachProcess). A helper started
   * since is not its parent and refuses it: the channel ends "refused" and the caller goes the `execute` way.
   */
  attach(request: ProcessAttachRequest): ProcessChannel | undefined {
    const client = this.#client;
    if (this.#stopped || client?.alive !== true) return undefined;
    return client.attach(request);
  }

  /**
   * Kills one of this runner's calls: the helper signals the job's group
   * first (the job will not commit), then the backend's sweep. Undefined
   * when the handle is not one of ours.
   */
  kill(handle: object, signal: KillSignal, graceMs: number): Promise<boolean> | undefined {
    const running = this.#calls.get(handle);
    if (running === undefined) return undefined;
    return running.call.signal(signal).then(async () => {
      const unstarted = running.call.pid === undefined && !running.call.done;
      const clean = await this.#sweep(running, signal, graceMs);
      if (!unstarted) return clean;
      // The kill came before the job's start was reported: the job may start after that sweep, and run the command
      // until the helper, which signals its group the moment it starts, gets to it. What it forked out of its group
      // meanwhile (setsid) carries the call's mark: once the job has ended, one more sweep reaches it. The job may
      // ignore TERM, so the wait is bounded and KILL follows; and the job is gone by then (its pid may be another
      // process's already), so that sweep goes by the mark alone.
      if (signal !== "KILL" && !(await settledWithin(running.call.end, graceMs))) await running.call.signal("KILL");
      await settledWithin(running.call.end, KILL_SETTLE_MS);
      return this.#sweep(running, "KILL", 0, true);
    });
  }

  async #sweep(running: RunningCall, signal: KillSignal, graceMs: number, markOnly = false): Promise<boolean> {
    const pid = markOnly ? undefined : running.call.pid;
    const target = { marks: [`${CALL_MARK}=${running.marks.call}`], root: pid, groups: pid === undefined ? [] : [pid] };
    const result = await this.#hits.sweep(running.call, target, (withHits) =>
      this.#options.sweep(withHits, signal, graceMs, running),
    );
    // No pid: the job's group was never known, so what it started may be out of the sweep's sight.
    return result.clean && (markOnly ? running.call.done : pid !== undefined);
  }

  #run(request: FastCallRequest, script: string): FastCall | undefined {
    if (this.#stopped) return undefined;
    const client = this.#client;
    if (client?.alive !== true || this.#snapshot !== request.snapshot) {
      this.prepare(request.snapshot);
      return undefined;
    }
    // The helper refuses a bigger request as a protocol violation (and would hold it all in memory): plain path.
    if ((request.stdin?.length ?? 0) + Buffer.byteLength(script) > MAX_RUN_BYTES) return undefined;
    try {
      return client.run(script, request.stdin, request.separateStreams === true);
    } catch {
      return undefined;
    }
  }

  /** Ends the helper (its launcher with it); jobs are the backend's to kill. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) {
      client.quit();
      client.kill();
    }
  }

  /** Kills the running helper as a crash would (tests). */
  killHelper(): void {
    this.#client?.kill();
  }

  #launch(snapshot: string): void {
    let stream: HelperStream | undefined;
    try {
      stream = this.#options.start(snapshot);
    } catch {
      stream = undefined;
    }
    if (stream === undefined) {
      this.#failed();
      return;
    }
    const client = new HelperClient(
      stream,
      (pid) => this.#options.killGroup(pid),
      (failure) => this.#onFailure(failure),
    );
    this.#client = client;
    void client.firstReady.then((ready) => {
      if (ready) this.#failures = 0;
      else if (!this.#stopped) this.#neverReady(stream);
    });
    void stream.closed.then(() => {
      if (this.#client !== client) return;
      this.#exits++;
      this.#client = undefined;
      this.#failed();
      if (this.#snapshot !== undefined) this.prepare(this.#snapshot);
    });
  }

  /**
   * A broken protocol means something wrote into the channel: this session
   * never trusts a helper again (the plain path runs every call). A stuck
   * helper is replaced later, as a dead one is.
   */
  #onFailure(failure: HelperFailure): void {
    const permanent = failure.kind === "violation";
    if (permanent) this.stop();
    (this.#options.warn ?? defaultWarn)(
      `shellwright: fast path ${permanent ? "disabled for this session" : "restarted"}: ${failure.message}; calls take the plain path`,
    );
  }

  /** A helper that ended before its launcher was ready (it cannot run there, the box went away): said once. */
  #neverReady(stream: HelperStream): void {
    const why = stream.stderrTail?.().trim().split("\n").slice(-3).join("; ");
    warnUnavailable(
      why
        ? `the fast-path helper ended before it was ready (${why})`
        : "the fast-path helper ended before it was ready",
      this.#options.warn,
    );
  }

  #failed(): void {
    const delay = Math.min(RESTART_DELAY_MS * 2 ** this.#failures, MAX_RESTART_DELAY_MS);
    this.#failures++;
    this.#retryAt = Date.now() + delay;
  }
}
