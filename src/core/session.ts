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
import { InvalidOptionError, isShellwrightError, SpawnError } from "./errors.js";
import { MarkerScanner } from "./marker.js";
import { OutputCollector } from "./output.js";
import { describe } from "./options.js";
import { buildCommandScript, buildInitScript, pendingPaths, sessionPaths, type ScriptPlan } from "./script.js";
import type { ProcessHandle, RunOptions, Transport } from "./transport.js";
import { normalizeExecuteOptions, type ExecuteOptions, type ExecuteResult, type SessionState } from "./environment.js";
import { EnvironmentBase } from "./environment-base.js";

/** @deprecated Import these from ./environment.js, the contract module; kept so older import paths still compile. */
export type { ExecuteOptions, ExecuteResult, SessionState };
/** @deprecated Import it from ./environment.js, the contract module. */
export { normalizeExecuteOptions };

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
  /** Values the tools mask in what a model sees (Environment.secretValues). @default none */
  secretValues?: readonly string[];
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

export class Session extends EnvironmentBase {
  readonly #transport: Transport;
  readonly #options: SessionOptions;
  readonly #running = new Set<AbortController>();

  private constructor(transport: Transport, options: SessionOptions) {
    const id = options.resume?.sessionId ?? newId();
    super(
      { sessionId: id, cwd: options.resume?.cwd ?? options.cwd, snapshotReady: options.resume?.snapshotReady ?? false },
      sessionPaths(transport.tempDir, id),
      options.timeoutMs,
      options.secretValues,
    );
    this.#transport = transport;
    this.#options = options;
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

  get backend(): string {
    return this.#transport.name;
  }

  async execute(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    const started = performance.now();
    const { cwd, timeoutMs, stdin, signal, onOutput, isolated } = this.checkExecute(command, options);

    if (signal?.aborted) {
      return {
        output: "[Command interrupted]",
        exitCode: 130,
        cwd: this.cwd,
        timedOut: false,
        interrupted: true,
        truncated: false,
        durationMs: 0,
      };
    }
    if ((await this.#transport.beforeExecute?.()) === "restarted") {
      this.setSnapshotReady(false);
      this.setCwd(this.#options.cwd);
      await this.#init();
    }

    const callId = newId();
    const ready = this.snapshotReady;
    const stdinBytes = stdin === undefined || stdin.length === 0 ? undefined : stdin;
    const embedded = this.#transport.stdinMode === "heredoc" ? stdinBytes : undefined;
    const script = buildCommandScript({
      ...this.#plan(callId),
      command,
      cwd: cwd ?? this.cwd,
      sessionCwd: cwd === undefined,
      snapshotReady: ready,
      stdinOnPipe: stdinBytes !== undefined && embedded === undefined,
      reportPid: this.#transport.needsRemotePid === true,
      isolated,
      ...(embedded === undefined ? {} : { embeddedStdin: embedded }),
    });
    const outcome = await this.#run(
      script,
      {
        login: !ready,
        cleanEnv: ready,
        ...(stdinBytes !== undefined && embedded === undefined ? { stdin: stdinBytes } : {}),
      },
      { timeoutMs, signal, onOutput },
    );
    const newCwd = this.#settle(outcome, callId, ready && !isolated);
    if (newCwd) this.setCwd(newCwd);

    let output = outcome.text;
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
    };
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
    return {
      sessionId: this.id,
      paths: this.paths,
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
        this.setCwd(cwd);
        this.setSnapshotReady(true);
        return;
      }
    }
    this.#settle({ ...outcome, markerCwd: undefined }, callId, true);
    if (outcome.exitCode === 126 && !outcome.timedOut) {
      throw new InvalidOptionError(
        "cwd",
        `cwd ${describe(this.#options.cwd)} cannot be entered on the ${this.#transport.name} backend: ${outcome.text.trim()}`,
      );
    }
    const why = outcome.timedOut
      ? `it timed out after ${this.#options.initTimeoutMs} ms`
      : `exit code ${outcome.exitCode}${outcome.text.trim() ? `: ${outcome.text.trim().slice(0, 500)}` : ""}`;
    this.#options.warn(
      `session init failed (${why}); commands will run as \`bash -l -c\` without a session snapshot, so exported variables will not persist`,
    );
  }

  /**
   * Moves a finished call's dumps into place and returns the new cwd, if the
   * call changed it. A call whose epilogue did not complete leaves no trace.
   */
  #settle(outcome: RunOutcome, callId: string, dumpedSnapshot: boolean): string | undefined {
    const files = this.#transport.files;
    const pending = pendingPaths(this.paths, callId);
    if (outcome.markerCwd === undefined) {
      files?.remove(pending.snapshot);
      files?.remove(pending.cwdFile);
      return undefined;
    }
    if (files) {
      if (dumpedSnapshot) files.rename(pending.snapshot, this.paths.snapshot);
      if (outcome.markerCwd !== "" && this.#transport.cwdSource === "file") {
        const fromFile = files.readText(pending.cwdFile);
        files.rename(pending.cwdFile, this.paths.cwdFile);
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
      throw new SpawnError(`Could not start bash on the ${this.#transport.name} backend: ${String(error)}`, {
        cause: error,
        backend: this.#transport.name,
      });
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
    const scanner = new MarkerScanner(this.id, { expectPid: transport.needsRemotePid === true });
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

function appendNotice(output: string, notice: string): string {
  return output === "" ? notice : `${output}\n${notice}`;
}

function formatSeconds(ms: number): string {
  return String(Math.round(ms / 10) / 100);
}
