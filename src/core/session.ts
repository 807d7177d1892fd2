/**
 * The session: the only place that knows the snapshot model.
 *
 * Every command is a fresh `bash -c` built by script.ts; state lives in the
 * snapshot and cwd files inside the backend. The session owns the cwd, the
 * timeout and interrupt handling, the login fallback, and the rule for
 * overlapping calls: each starts from the state as it was when it started, and
 * the one that finishes last sets the env (files are renamed into place, so
 * nothing is ever half-written).
 */

import { randomBytes } from "node:crypto";
import { InvalidOptionError, SessionClosedError, isShellwrightError, SpawnError } from "./errors.js";
import { MarkerScanner } from "./marker.js";
import { OutputCollector } from "./output.js";
import { describe, positiveNumber, shellString } from "./options.js";
import { buildCommandScript, buildInitScript, pendingPaths, sessionPaths, type ScriptPlan, type SessionPaths } from "./script.js";
import type { ProcessHandle, RunOptions, Transport } from "./transport.js";
import type { Environment } from "./environment.js";

export interface SessionOptions {
  /** The session's first cwd; `~` is expanded by bash on the backend. */
  cwd: string;
  /** Default per-command timeout. */
  timeoutMs: number;
  /** Output kept in memory per command (head + tail), in UTF-8 bytes. */
  maxOutputChars: number;
  /** Share of maxOutputChars kept from the start of the output. */
  outputHeadFraction: number;
  /** Wait between SIGTERM and SIGKILL when a command is stopped. */
  killGraceMs: number;
  /** Limit for the one-time snapshot bootstrap. */
  initTimeoutMs: number;
  warn: (message: string) => void;
  /** Reattach to a session whose snapshot already exists (the CLI's named sessions). */
  resume?: SessionState;
}

/** What it takes to reattach to a session from another process. */
export interface SessionState {
  sessionId: string;
  cwd: string;
  snapshotReady: boolean;
}

export interface ExecuteOptions {
  /** Run this one command here; the session's cwd does not move (a `cd` inside the command still moves it). */
  cwd?: string;
  /** @default the session's timeoutMs (180 000) */
  timeoutMs?: number;
  /** Bytes for the command's stdin, delivered exactly. Without it stdin is empty. */
  stdin?: string | Uint8Array;
  /** Aborting interrupts the command: its process tree is killed and exitCode is 130. */
  signal?: AbortSignal;
  /** Output as it arrives, decoded as UTF-8 (markers never included). */
  onOutput?: (text: string) => void;
  /**
   * Run from the session's state but leave it untouched: the command's env and
   * cwd changes are not saved. For helper commands (the file tools, execute_code's
   * plumbing) that must not race with the agent's own commands: under the
   * last-writer-wins rule a helper that finishes late would otherwise undo an
   * `export` made by a command that ran beside it.
   * @default false
   */
  isolated?: boolean;
}

export interface ExecuteResult {
  /** stdout and stderr merged in order; head and tail kept when long, the cut said inline. */
  output: string;
  /** The command's exit code; 124 after a timeout, 130 after an interrupt, 126 when the cwd could not be entered. */
  exitCode: number;
  /** The session's cwd after this command. */
  cwd: string;
  timedOut: boolean;
  interrupted: boolean;
  truncated: boolean;
  durationMs: number;
}

interface RunLimits {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  onOutput?: ((text: string) => void) | undefined;
}

interface RunOutcome {
  text: string;
  truncated: boolean;
  exitCode: number;
  /** The marker's cwd ("" = unchanged); undefined when the epilogue did not complete. */
  markerCwd: string | undefined;
  timedOut: boolean;
  interrupted: boolean;
}

/** After the process exits, how long to wait for the rest of its output when no marker came. */
const DRAIN_AFTER_EXIT_MS = 250;
/** After SIGKILL, how long to wait for an exit before giving up on the process. */
const GIVE_UP_AFTER_KILL_MS = 5000;

const newId = (): string => randomBytes(6).toString("hex");

export class Session implements Environment {
  readonly #transport: Transport;
  readonly #options: SessionOptions;
  readonly #id: string;
  readonly #paths: SessionPaths;
  #cwd: string;
  #snapshotReady = false;
  #closed = false;
  readonly #running = new Set<AbortController>();
  readonly #closeHooks = new Set<() => Promise<void> | void>();
  #closing: Promise<void> | undefined;

  private constructor(transport: Transport, options: SessionOptions) {
    this.#transport = transport;
    this.#options = options;
    this.#id = options.resume?.sessionId ?? newId();
    this.#paths = sessionPaths(transport.tempDir, this.#id);
    this.#cwd = options.resume?.cwd ?? options.cwd;
    this.#snapshotReady = options.resume?.snapshotReady ?? false;
  }

  /** Starts the transport and captures the snapshot (unless resuming). */
  static async open(transport: Transport, options: SessionOptions): Promise<Session> {
    await transport.start();
    const session = new Session(transport, options);
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

  get id(): string {
    return this.#id;
  }
  get backend(): string {
    return this.#transport.name;
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

  state(): SessionState {
    return { sessionId: this.#id, cwd: this.#cwd, snapshotReady: this.#snapshotReady };
  }

  async execute(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    const started = performance.now();
    shellString("command", command);
    const { cwd, timeoutMs, stdin, signal, onOutput, isolated } = normalizeExecuteOptions(options, this.#options.timeoutMs);
    if (this.#closed) throw new SessionClosedError();

    if (signal?.aborted) {
      return { output: "[Command interrupted]", exitCode: 130, cwd: this.#cwd, timedOut: false, interrupted: true, truncated: false, durationMs: 0 };
    }
    if ((await this.#transport.beforeExecute?.()) === "restarted") {
      this.#snapshotReady = false;
      this.#cwd = this.#options.cwd;
      await this.#init();
    }

    const callId = newId();
    const ready = this.#snapshotReady;
    const stdinBytes = stdin === undefined || stdin.length === 0 ? undefined : stdin;
    const embedded = this.#transport.stdinMode === "heredoc" ? stdinBytes : undefined;
    const script = buildCommandScript({
      ...this.#plan(callId),
      command,
      cwd: cwd ?? this.#cwd,
      sessionCwd: cwd === undefined,
      snapshotReady: ready,
      stdinOnPipe: stdinBytes !== undefined && embedded === undefined,
      reportPid: this.#transport.needsRemotePid === true,
      isolated,
      ...(embedded === undefined ? {} : { embeddedStdin: embedded }),
    });
    const outcome = await this.#run(
      script,
      { login: !ready, cleanEnv: ready, ...(stdinBytes !== undefined && embedded === undefined ? { stdin: stdinBytes } : {}) },
      { timeoutMs, signal, onOutput },
    );
    const newCwd = this.#settle(outcome, callId, ready && !isolated);
    if (newCwd) this.#cwd = newCwd;

    let output = outcome.text;
    if (outcome.timedOut) output = appendNotice(output, `[Command timed out after ${formatSeconds(timeoutMs)}s]`);
    else if (outcome.interrupted) output = appendNotice(output, "[Command interrupted]");
    return {
      output,
      exitCode: outcome.exitCode,
      cwd: this.#cwd,
      timedOut: outcome.timedOut,
      interrupted: outcome.interrupted,
      truncated: outcome.truncated,
      durationMs: Math.round(performance.now() - started),
    };
  }

  /**
   * Runs `hook` when the session closes, before anything stops, so the hook
   * can still execute commands (the tools' process registry kills the
   * session's background processes this way). Returns a function that removes it.
   */
  beforeClose(hook: () => Promise<void> | void): () => void {
    this.#closeHooks.add(hook);
    return () => this.#closeHooks.delete(hook);
  }

  /** Runs the close hooks, interrupts running commands, stops the backend and removes the session's files. */
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
    for (const controller of this.#running) controller.abort();
    const files = this.#transport.files;
    files?.remove(this.#paths.snapshot);
    files?.remove(this.#paths.cwdFile);
    await this.#transport.stop();
  }

  #plan(callId: string): ScriptPlan {
    return {
      sessionId: this.#id,
      paths: this.#paths,
      callId,
      renameInScript: this.#transport.files === undefined,
      // Every backend keeps the cwd file (a resumed session reads it there); marker backends just don't read it back.
      writeCwdFile: true,
    };
  }

  async #init(): Promise<void> {
    const callId = newId();
    const outcome = await this.#run(
      buildInitScript({ ...this.#plan(callId), cwd: this.#options.cwd }),
      { login: false, cleanEnv: false },
      { timeoutMs: this.#options.initTimeoutMs },
    );
    // Done only when the snapshot was really written: exit 0 and the marker seen.
    if (outcome.exitCode === 0 && outcome.markerCwd) {
      const cwd = this.#settle(outcome, callId, true);
      if (cwd) {
        this.#cwd = cwd;
        this.#snapshotReady = true;
        return;
      }
    }
    this.#settle({ ...outcome, markerCwd: undefined }, callId, true);
    if (outcome.exitCode === 126 && !outcome.timedOut) {
      throw new InvalidOptionError("cwd", `cwd ${describe(this.#options.cwd)} cannot be entered on the ${this.#transport.name} backend: ${outcome.text.trim()}`);
    }
    const why = outcome.timedOut ? `it timed out after ${this.#options.initTimeoutMs} ms` : `exit code ${outcome.exitCode}${outcome.text.trim() ? `: ${outcome.text.trim().slice(0, 500)}` : ""}`;
    this.#options.warn(`session init failed (${why}); commands will run as \`bash -l -c\` without a session snapshot, so exported variables will not persist`);
  }

  /**
   * Moves a finished call's dumps into place and returns the new cwd, if the
   * call changed it. A call whose epilogue did not complete leaves no trace.
   */
  #settle(outcome: RunOutcome, callId: string, dumpedSnapshot: boolean): string | undefined {
    const files = this.#transport.files;
    const pending = pendingPaths(this.#paths, callId);
    if (outcome.markerCwd === undefined) {
      files?.remove(pending.snapshot);
      files?.remove(pending.cwdFile);
      return undefined;
    }
    if (files) {
      if (dumpedSnapshot) files.rename(pending.snapshot, this.#paths.snapshot);
      if (outcome.markerCwd !== "" && this.#transport.cwdSource === "file") {
        const fromFile = files.readText(pending.cwdFile);
        files.rename(pending.cwdFile, this.#paths.cwdFile);
        return fromFile || outcome.markerCwd;
      }
    }
    return outcome.markerCwd === "" ? undefined : outcome.markerCwd;
  }

  async #run(script: string, runOptions: RunOptions, limits: RunLimits): Promise<RunOutcome> {
    let handle: ProcessHandle;
    try {
      handle = this.#transport.runBash(script, { ...runOptions, timeoutMs: limits.timeoutMs });
    } catch (error) {
      if (isShellwrightError(error)) throw error;
      throw new SpawnError(`Could not start bash on the ${this.#transport.name} backend: ${String(error)}`, { cause: error, backend: this.#transport.name });
    }
    const controller = new AbortController();
    this.#running.add(controller);
    try {
      return await this.#collect(handle, limits, controller.signal);
    } finally {
      this.#running.delete(controller);
    }
  }

  #collect(handle: ProcessHandle, limits: RunLimits, closing: AbortSignal): Promise<RunOutcome> {
    const transport = this.#transport;
    const scanner = new MarkerScanner(this.#id, { expectPid: transport.needsRemotePid === true });
    const collector = new OutputCollector(this.#options.maxOutputChars, this.#options.outputHeadFraction);
    const decoder = limits.onOutput ? new TextDecoder() : undefined;
    let finished = false;
    const emit = (bytes: Uint8Array): void => {
      if (finished || bytes.length === 0) return;
      collector.push(bytes);
      if (decoder) {
        const text = decoder.decode(bytes, { stream: true });
        if (text) limits.onOutput!(text);
      }
    };

    return new Promise<RunOutcome>((resolve, reject) => {
      let exitCode: number | undefined;
      let ended = false;
      let stopReason: "timeout" | "interrupt" | undefined;
      const timers: NodeJS.Timeout[] = [];
      const later = (ms: number, fn: () => void): void => {
        // Node timers hold at most 2^31-1 ms (24.8 days); longer means "no limit" in practice.
        timers.push(setTimeout(fn, Math.min(ms, 2 ** 31 - 1)));
      };

      const finish = (): void => {
        if (finished) return;
        emit(scanner.flush());
        finished = true;
        for (const timer of timers) clearTimeout(timer);
        limits.signal?.removeEventListener("abort", onAbort);
        closing.removeEventListener("abort", onAbort);
        if (decoder) {
          const rest = decoder.decode();
          if (rest) limits.onOutput!(rest);
        }
        const collected = collector.finish();
        resolve({
          text: collected.text,
          truncated: collected.truncated,
          exitCode: stopReason === "timeout" ? 124 : stopReason === "interrupt" ? 130 : (exitCode ?? 1),
          markerCwd: stopReason === undefined ? scanner.cwd : undefined,
          timedOut: stopReason === "timeout",
          interrupted: stopReason === "interrupt",
        });
      };
      // Completion is the process exit plus the end marker (or the end of the
      // stream), never EOF alone: a backgrounded child may hold the pipe forever.
      const check = (): void => {
        if (exitCode !== undefined && (scanner.done || ended)) finish();
      };

      const kill = async (signal: "TERM" | "KILL"): Promise<void> => {
        try {
          if (transport.killTree) await transport.killTree(handle, signal, scanner.pid);
          else handle.kill();
        } catch {
          handle.kill();
        }
      };
      const stop = (reason: "timeout" | "interrupt"): void => {
        if (stopReason !== undefined || finished) return;
        stopReason = reason;
        void kill("TERM");
        later(this.#options.killGraceMs, () => {
          if (exitCode === undefined) void kill("KILL");
          later(GIVE_UP_AFTER_KILL_MS, finish);
        });
      };
      const onAbort = (): void => stop("interrupt");

      later(limits.timeoutMs, () => stop("timeout"));
      limits.signal?.addEventListener("abort", onAbort, { once: true });
      closing.addEventListener("abort", onAbort, { once: true });

      void (async () => {
        try {
          for await (const chunk of handle.output) {
            emit(scanner.push(chunk));
            if (scanner.done) check();
          }
        } catch {
          // A broken stream ends the output; the exit code still decides.
        }
        ended = true;
        check();
      })();

      handle.wait().then(
        (code) => {
          exitCode = code;
          check();
          if (!finished) later(DRAIN_AFTER_EXIT_MS, finish);
        },
        (error: unknown) => {
          if (finished) return;
          finished = true;
          for (const timer of timers) clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}

/** Validates execute options; shared with environments that run the session model elsewhere. */
export function normalizeExecuteOptions(options: ExecuteOptions, defaultTimeoutMs: number) {
  if (typeof options !== "object" || options === null) {
    throw new InvalidOptionError("options", `execute options must be an object, got ${describe(options)}`);
  }
  const known = ["cwd", "timeoutMs", "stdin", "signal", "onOutput", "isolated"];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new InvalidOptionError(key, `Unknown execute option ${describe(key)}; known options: ${known.join(", ")}`);
  }
  const cwd = options.cwd === undefined ? undefined : shellString("cwd", options.cwd);
  const timeoutMs = positiveNumber("timeoutMs", options.timeoutMs, defaultTimeoutMs);
  let stdin: Uint8Array | undefined;
  if (typeof options.stdin === "string") stdin = Buffer.from(options.stdin, "utf8");
  else if (options.stdin instanceof Uint8Array) stdin = options.stdin;
  else if (options.stdin !== undefined) throw new InvalidOptionError("stdin", `stdin must be a string or a Uint8Array, got ${describe(options.stdin)}`);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new InvalidOptionError("signal", `signal must be an AbortSignal, got ${describe(options.signal)}`);
  }
  if (options.onOutput !== undefined && typeof options.onOutput !== "function") {
    throw new InvalidOptionError("onOutput", `onOutput must be a function, got ${describe(options.onOutput)}`);
  }
  if (options.isolated !== undefined && typeof options.isolated !== "boolean") {
    throw new InvalidOptionError("isolated", `isolated must be a boolean, got ${describe(options.isolated)}`);
  }
  return { cwd, timeoutMs, stdin, signal: options.signal, onOutput: options.onOutput, isolated: options.isolated === true };
}

function appendNotice(output: string, notice: string): string {
  return output === "" ? notice : `${output}\n${notice}`;
}

function formatSeconds(ms: number): string {
  return String(Math.round(ms / 10) / 100);
}
