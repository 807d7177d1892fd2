/**
 * The background processes of one session. Everything goes through
 * `Environment.execute` (so it works on every backend), each operation costs at
 * most one round trip, and none of them touches the session's env or cwd
 * (`isolated: true`), so a poll can never undo a concurrent `export`.
 *
 * There is no poller thread: state is refreshed when asked (poll, list, log,
 * wait), and only processes started with `notifyOnComplete` get a watcher,
 * one waiting command inside the backend that ends when the process does.
 */

import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import type { Environment } from "../../core/environment.js";
import { ProcessError } from "../../core/errors.js";
import { Redactor } from "../../core/redact.js";
import { DEFAULT_PROCESS_SETTINGS, type ProcessSettings } from "../shared/tool-settings.js";
import { ptyLaunch } from "./pty-helper.js";
import { ptyCommandLine, resizeScript } from "./pty-scripts.js";
import { startOutputStream, type ProcessSpawnOptions } from "./stream-start.js";
import { checkProcessEnv, checkStreamOptions, signalScript, type ProcessSignal } from "./process-signal.js";
import { checkPtySize } from "./pty-size.js";
import { PtyTerminal, type PatternSource, type PatternWait, type ScreenShot } from "./pty-terminal.js";
import type { SecretFinder } from "./screen-text.js";
import { patternWorker } from "./pattern-worker.js";
import {
  newBackgroundProcess,
  ptyStateOf,
  type BackgroundProcess,
  type ProcessStatus,
  type PtySize,
} from "./background-process.js";
import { completionEvent, type CompletionEvent } from "./completion-event.js";
import { endSignal, markEnded } from "./process-end.js";
import { flushCarry, takeOutput } from "./process-output.js";
import { closeScript, leftoversScript, parseLeftovers } from "./end-scripts.js";
import { watchCompletion } from "./completion-watcher.js";
import { HOUSEKEEPING, runPoll } from "./housekeeping.js";
import { closeStdin, inStdinOrder, writeStdin } from "./process-stdin.js";
import { pruneFinished } from "./process-retention.js";

export { shownOutput } from "./background-process.js";
export type { BackgroundProcess, ProcessStatus, PtySize, PtyState } from "./background-process.js";
export type { CompletionEvent } from "./completion-event.js";
import {
  killScript,
  launchScript,
  pollScript,
  launchInput,
  processFiles,
  waitScript,
  type PollAnswer,
  type PollRequest,
} from "./process-scripts.js";

const registries = new WeakMap<Environment, ProcessRegistry>();

/** Completion events of background processes started with notify_on_complete, not yet seen by the model. */
export function drainCompletionEvents(session: Environment): CompletionEvent[] {
  return processRegistry(session).drainEvents();
}

/** The session's registry, created on first use; `settings`, when given, apply from this call on. */
export function processRegistry(session: Environment, settings?: ProcessSettings): ProcessRegistry {
  let registry = registries.get(session);
  if (!registry) {
    registry = new ProcessRegistry(session, settings ?? DEFAULT_PROCESS_SETTINGS);
    registries.set(session, registry);
  } else if (settings !== undefined) {
    registry.settings = settings;
  }
  return registry;
}

export class ProcessRegistry {
  readonly #session: Environment;
  #settings: ProcessSettings;
  readonly #processes = new Map<string, BackgroundProcess>();
  readonly #events: CompletionEvent[] = [];
  readonly #watchers = new Map<string, AbortController>();
  readonly #stateDir: string;
  /** Masks completion events; the tools set it from their settings (undefined: redaction off). */
  redactor: Redactor | undefined;

  constructor(session: Environment, settings: ProcessSettings) {
    this.#session = session;
    this.redactor = new Redactor(session.secretValues ?? []);
    this.#settings = settings;
    this.#stateDir = posix.dirname(session.paths.snapshot);
    session.beforeClose(() => this.close());
  }

  get settings(): ProcessSettings {
    return this.#settings;
  }
  set settings(settings: ProcessSettings) {
    this.#settings = settings;
  }

  get(id: string): BackgroundProcess | undefined {
    this.#prune();
    return this.#processes.get(id);
  }

  /** Every tracked process, oldest first. */
  all(): BackgroundProcess[] {
    this.#prune();
    return [...this.#processes.values()];
  }

  /**
   * Starts `command` in the background, in `cwd` (default: the session's),
   * through the session snapshot, with `env` exported to it; with `pty`, under a pseudo-terminal of that size.
   * `onOutput` gets the output as it arrives, as the program wrote it (for a PTY,
   * with its terminal escapes), independent of poll, wait and log. With `separateStreams` (not with a PTY), stderr
   * is kept apart: `onStdout` and `onStderr` get each stream's bytes, and poll, wait and log show stdout alone.
   */
  async spawn(command: string, options: ProcessSpawnOptions = {}): Promise<BackgroundProcess> {
    this.#prune();
    if (this.#processes.size >= this.#settings.maxProcesses) {
      throw new ProcessError(
        `Too many background processes (${this.#processes.size} running, the limit is ${this.#settings.maxProcesses}). Kill one with process(action="kill") first.`,
      );
    }
    const env = Object.entries(checkProcessEnv(options.env));
    const separateStreams = checkStreamOptions(options);
    const id = `proc_${randomBytes(6).toString("hex")}`;
    const files = processFiles(`${this.#stateDir}/shellwright-bg-${this.#session.id}-${id}`);
    const cwd = options.cwd ?? this.#session.cwd;
    const size = options.pty === undefined ? undefined : checkPtySize(options.pty);
    const pty = size === undefined ? undefined : await this.#ptyLaunch(size);
    const launch = { maxLogBytes: this.#settings.maxLogBytes, pty, separateStreams, envNames: env.map(([n]) => n) };
    const result = await this.#session.execute(launchScript(files, command, id, launch), {
      ...HOUSEKEEPING,
      cwd,
      ...(env.length === 0 ? {} : { stdin: launchInput(env.map(([, value]) => value)) }),
    });
    const pid = Number(/(\d+)\s*$/.exec(result.output)?.[1]);
    if (result.exitCode !== 0 || !Number.isInteger(pid) || pid <= 0) {
      const why =
        result.exitCode === 126
          ? `the directory ${cwd} cannot be entered`
          : result.output.trim() || `exit code ${result.exitCode}`;
      throw new ProcessError(`Failed to start background process: ${why}`);
    }
    const process = newBackgroundProcess({
      id,
      command,
      cwd,
      pid,
      files,
      notifyOnComplete: options.notifyOnComplete === true,
      separateStreams,
    });
    if (size !== undefined) {
      process.pty = {
        // The emulator's answers to the program's queries (ESC[6n …) are typed back into the PTY.
        terminal: new PtyTerminal(size.cols, size.rows, (data) => {
          this.write(process, data).catch(() => undefined);
        }),
      };
    }
    const started: Promise<void>[] = [];
    const streaming = startOutputStream(this.#session, process, separateStreams, options);
    if (streaming !== undefined) started.push(streaming);
    this.#processes.set(id, process);
    if (process.notifyOnComplete) started.push(this.#watch(process));
    // Nothing could show its output or its end (a gateway at its bound of long-lived executions): end it now.
    await Promise.all(started).catch(async (error: unknown) => {
      await this.kill(process).catch(() => undefined);
      this.#processes.delete(id);
      process.stream?.stop();
      process.pty?.terminal.dispose();
      throw new ProcessError(
        `The process was ended at once: its output cannot be followed. ${(error as Error).message ?? String(error)}`,
      );
    });
    return process;
  }

  /** The helper's launch for a PTY of `size`, the helper copied into the backend first. */
  async #ptyLaunch(size: PtySize) {
    // Below the registry's own grace, so the helper's KILL comes before the group's.
    return ptyLaunch(this.#session, size, this.#settings.killGraceMs / 2);
  }

  /** The command line that runs `command` under a PTY in the foreground (terminal pty=true). */
  async foregroundPtyCommand(command: string, size: PtySize): Promise<string> {
    return ptyCommandLine(await this.#ptyLaunch(checkPtySize(size)), command);
  }

  /** The PTY's visible screen and cursor; the secrets `find` finds masked, also where a line wraps. */
  async screen(process: BackgroundProcess, find?: SecretFinder): Promise<ScreenShot> {
    return ptyStateOf(process, "screen").terminal.screen(find);
  }

  /** A new action on the PTY starts: `waitFor` looks at what arrives after it. */
  markAction(process: BackgroundProcess): void {
    process.pty?.terminal.markAction();
  }

  /** Resizes the PTY: the program gets SIGWINCH. Returns false when the process has ended. */
  async resize(process: BackgroundProcess, size: PtySize): Promise<boolean> {
    const pty = ptyStateOf(process, "resize");
    const { cols, rows } = checkPtySize(size, "size");
    if (process.status !== "running") return false;
    const result = await this.#session.execute(resizeScript(process.files.ctl, cols, rows), HOUSEKEEPING);
    if (result.exitCode !== 0) return false;
    pty.terminal.resize(cols, rows);
    return true;
  }

  /**
   * Waits until the output since the previous action matches `pattern`
   * (woken by the output, not a timer), matched in linear time off the event
   * loop (pattern-worker.ts): RE2's syntax, so no lookahead or backreference.
   */
  async waitFor(
    process: BackgroundProcess,
    pattern: PatternSource | string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<PatternWait> {
    const source = typeof pattern === "string" ? { source: pattern, flags: "m" } : pattern;
    const terminal = ptyStateOf(process, "wait with a pattern").terminal;
    const answer = await terminal.waitFor(source, timeoutMs, patternWorker(this.#session), signal);
    if (answer.status !== "matched") await this.refresh([process]);
    return answer;
  }

  /** Refreshes the given processes (all running ones by default) in one round trip. */
  async refresh(processes: readonly BackgroundProcess[] = this.all()): Promise<void> {
    const running = processes.filter((p) => p.status === "running");
    if (running.length === 0) return;
    const requests = running.map((p, index) => this.#request(p, index));
    const answers = await runPoll(this.#session, pollScript(requests), HOUSEKEEPING);
    for (const answer of answers) this.#apply(running[answer.index]!, answer);
  }

  /**
   * Waits until the process ends or `timeoutMs` passes (one round trip).
   * Returns false when it is still running.
   */
  async wait(process: BackgroundProcess, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (process.status !== "running") return true;
    const interval = this.#settings.watchIntervalMs;
    const checks = Math.max(1, Math.ceil(timeoutMs / interval));
    // Ended by the wait's own answer, the caller's signal, or the end seen elsewhere (a kill).
    const stop = AbortSignal.any([...(signal ? [signal] : []), endSignal(process)]);
    const answers = await runPoll(this.#session, waitScript(this.#request(process, 0), interval, checks), {
      isolated: true,
      timeoutMs: timeoutMs + 30_000,
      signal: stop,
    });
    for (const answer of answers) this.#apply(process, answer);
    return process.status !== "running";
  }

  /** Kills the process's whole group: TERM, a grace period, then KILL. */
  async kill(process: BackgroundProcess): Promise<void> {
    if (process.status !== "running") return;
    process.killing = true;
    try {
      const answers = await runPoll(
        this.#session,
        killScript(this.#request(process, 0), process.id, this.#settings.killGraceMs),
        {
          isolated: true,
          timeoutMs: this.#settings.killGraceMs + 30_000,
        },
      );
      for (const answer of answers) this.#apply(process, answer);
    } finally {
      process.killing = false;
    }
    // The group was sent SIGKILL: whatever the last check saw, nothing of it runs now.
    if (process.status === "running") this.#finish(process, "killed", undefined);
    this.#watchers.get(process.id)?.abort();
  }

  /**
   * Sends `signal` to the command and everything it started (its group, and what left it with setsid, by its
   * mark); the wrapper and the log's bounders are spared, so the end and the last output are still recorded: a
   * command ended by it exits 128 + the signal's number. After SIGKILL the process counts as killed. The group is
   * signalled only while its leader is still this process's wrapper (a reused PID is left alone), and a helper is
   * spared only if it is one the wrapper started, whatever the command wrote in `keep` (process-signal.ts).
   */
  async signal(process: BackgroundProcess, signal: ProcessSignal): Promise<void> {
    if (process.status !== "running") return;
    if (signal === "SIGKILL") process.killing = true;
    const script = signalScript(this.#request(process, 0), process.id, signal);
    for (const answer of await runPoll(this.#session, script, HOUSEKEEPING)) this.#apply(process, answer);
  }

  /**
   * Ends what an ended process left running (a server started with `&`, a
   * setsid daemon), recognised by its mark. Returns how many processes it ended.
   */
  async reap(process: BackgroundProcess): Promise<number> {
    const grace = this.#settings.killGraceMs;
    const script = leftoversScript([{ id: process.id, pgid: process.pid }], grace);
    return parseLeftovers((await this.#session.execute(script, { ...HOUSEKEEPING, timeoutMs: grace + 30_000 })).output);
  }

  /** Writes to the process's stdin (its terminal, for a PTY process). Returns false when its stdin is closed. */
  async write(process: BackgroundProcess, data: string): Promise<boolean> {
    return inStdinOrder(process, () =>
      process.pty === undefined
        ? (process.stream?.write?.(data) ?? writeStdin(this.#session, process, data))
        : writeStdin(this.#session, process, data, process.stream?.channel),
    );
  }

  /** Closes the process's stdin: it reads EOF after what was already written (or asked to be: a write not awaited). */
  async closeStdin(process: BackgroundProcess): Promise<boolean> {
    return inStdinOrder(process, () => closeStdin(this.#session, process));
  }

  /** Completion events of `notifyOnComplete` processes whose end the model has not seen yet. */
  drainEvents(): CompletionEvent[] {
    const events = this.#events.splice(0).filter((event) => !this.#processes.get(event.processId)?.endSeen);
    for (const event of events) {
      const process = this.#processes.get(event.processId);
      if (process) process.endSeen = true;
    }
    return events;
  }

  /**
   * Kills every process of the session, and whatever ended ones left running,
   * and removes their files (one round trip). Runs when the session closes.
   */
  async close(): Promise<void> {
    for (const watcher of this.#watchers.values()) watcher.abort();
    this.#watchers.clear();
    const entries = [...this.#processes.values()];
    if (entries.length === 0 || this.#session.closed) return;
    const script = closeScript(entries, this.#settings.killGraceMs);
    const options = { ...HOUSEKEEPING, timeoutMs: this.#settings.killGraceMs + 30_000 };
    await this.#session.execute(script, options).catch(() => undefined);
    for (const process of entries) {
      if (process.status === "running") this.#finish(process, "killed", undefined);
      process.stream?.stop();
      process.pty?.terminal.dispose();
    }
    this.#processes.clear();
  }

  #request(process: BackgroundProcess, index: number): PollRequest {
    return {
      index,
      files: process.files,
      pgid: process.pid,
      offset: process.offset,
      maxBytes: this.#settings.bufferChars,
    };
  }

  /** Applies one answer: its new output (process-output.ts), then the end it reports. */
  #apply(process: BackgroundProcess, answer: PollAnswer): void {
    takeOutput(process, answer, this.#settings.bufferChars);
    if (process.status !== "running" || answer.running) return;
    const status: ProcessStatus = process.killing ? "killed" : answer.exitCode === undefined ? "lost" : "exited";
    this.#finish(process, status, answer.exitCode);
  }

  #finish(process: BackgroundProcess, status: ProcessStatus, exitCode: number | undefined): void {
    flushCarry(process);
    process.status = status;
    process.exitCode = exitCode ?? (status === "killed" ? 137 : undefined);
    process.finishedAt = Date.now();
    process.stdinOpen = false;
    markEnded(process);
    this.#watchers.get(process.id)?.abort();
    this.#watchers.delete(process.id);
    process.stream?.processEnded();
    if (process.notifyOnComplete) this.#events.push(completionEvent(process, this.redactor));
  }

  /** Starts the watcher that reports the end of a `notifyOnComplete` process (completion-watcher.ts). */
  #watch(process: BackgroundProcess): Promise<void> {
    const controller = new AbortController();
    this.#watchers.set(process.id, controller);
    return watchCompletion(
      this.#session,
      process,
      controller.signal,
      () => waitScript(this.#request(process, 0), this.#settings.watchIntervalMs, undefined),
      (answer) => this.#apply(process, answer),
    );
  }

  #prune(): void {
    pruneFinished(this.#processes, this.#settings);
  }
}
