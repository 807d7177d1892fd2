/**
 * `spawn(env, command)`: a background process from a program, with a handle
 * to wait for it, kill it, write to its stdin and read its output. It is one
 * of the session's background processes (tools/process/process-registry.ts),
 * the registry the `process` tool uses: started through the session's
 * snapshot (its cwd, variables, functions), killed with everything it
 * started, ended with the session, and visible to a model by its id.
 */

import type { Environment } from "../core/environment.js";
import { InvalidOptionError, ProcessError } from "../core/errors.js";
import { describe, plainObject, rejectUnknown, shellString } from "../core/options.js";
import { constants } from "node:os";
import { followLog } from "../tools/process/log-follower.js";
import {
  checkProcessEnv,
  checkSignal,
  checkStreamOptions,
  type ProcessSignal,
} from "../tools/process/process-signal.js";
import {
  processRegistry,
  type BackgroundProcess,
  type ProcessStatus,
  type PtySize,
} from "../tools/process/process-registry.js";

export interface SpawnOptions {
  /** Where it runs; the session's cwd does not move. @default the session's cwd */
  cwd?: string;
  /** Its output as it arrives (stdout and stderr merged, as the process wrote them). Not with `separateStreams`. */
  onOutput?: (text: string) => void;
  /** Run it under a pseudo-terminal of this size (an interactive program). A terminal is one stream. */
  pty?: PtySize;
  /**
   * Keep its stderr apart from its stdout: `onStdout` and `onStderr` get each stream's exact bytes, in order, as
   * they arrive (binary safe). Between the two streams the order is best effort. `logs()`, `wait()`'s `output` and
   * the process tool then show its stdout alone.
   */
  separateStreams?: boolean;
  /** With `separateStreams`: its stdout's bytes, in order. */
  onStdout?: (bytes: Uint8Array) => void;
  /** With `separateStreams`: its stderr's bytes, in order. */
  onStderr?: (bytes: Uint8Array) => void;
  /**
   * Variables exported to it alone (the session's stay as they are). Their values go on the launch's stdin, never
   * on a command line another user could read in `ps`.
   */
  env?: Record<string, string>;
}

export type { ProcessSignal };

export interface ProcessResult {
  /** undefined when no exit code could be learnt (killed with SIGKILL, or lost with its backend). */
  exitCode: number | undefined;
  status: Exclude<ProcessStatus, "running">;
  /**
   * The signal that ended it, read from the shell's convention (exit code 128 + n: a program's own `exit 143`
   * reads the same), e.g. "SIGKILL"; undefined for an exit code of 128 or below.
   */
  signal: string | undefined;
  /** The tail of its output (the registry keeps the last 200 000 characters). */
  output: string;
}

export interface SpawnedProcess {
  /** The registry's id (`proc_…`): the `session_id` the process tool takes. */
  readonly id: string;
  /** Its process group inside the backend. */
  readonly pid: number;
  readonly command: string;
  /** As of the last look (wait, logs, kill). */
  readonly status: ProcessStatus;
  readonly exitCode: number | undefined;
  /** Resolves when it ended; with `timeoutMs`, undefined if it still runs then. An abort stops the wait, not the process. */
  wait(options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<ProcessResult | undefined>;
  /** Kills it and everything it started (TERM, a grace, then KILL); of an ended process, what it left running. */
  kill(): Promise<void>;
  /**
   * Sends one signal to it and everything it started, also what left its process group with setsid (nothing
   * follows it: a process may ignore SIGTERM). Its wrapper stays to record the end: killed by it, it ends with
   * exit code 128 + n (`ProcessResult.signal` names it), and after SIGKILL its status is "killed".
   */
  signal(signal: ProcessSignal): Promise<void>;
  /**
   * With `separateStreams` and a listener: resolves once every byte of both streams has been delivered (after its
   * end) or the streams were stopped (the session closed). Resolved at once otherwise.
   */
  readonly streamsEnded: Promise<void>;
  /** Writes to its stdin (its terminal, under a pty). Throws a ProcessError once its stdin is closed. */
  write(data: string): Promise<void>;
  /** Closes its stdin: it reads end-of-file after what was written. */
  closeStdin(): Promise<void>;
  /** The output kept so far (the last 200 000 characters), refreshed now. */
  logs(): Promise<string>;
  /**
   * Its output from the start, as it arrives, until it ended; each call reads it from the start again.
   * Throws a ProcessError when the backend refuses to follow it (a gateway at its long-lived bound).
   */
  output(): AsyncIterable<string>;
}

/** A wait without a limit goes in slices of this: a backend's own exec limits never see one call that long. */
const WAIT_SLICE_MS = 10 * 60_000;
/** After the end, how long a stream keeps reading (a `tail` that cannot watch the pid never ends by itself). */
const FOLLOW_AFTER_END_MS = 2000;

export async function spawn(env: Environment, command: string, options: SpawnOptions = {}): Promise<SpawnedProcess> {
  shellString("command", command);
  const raw = plainObject("options", options);
  rejectUnknown("spawn", raw, ["cwd", "onOutput", "pty", "separateStreams", "onStdout", "onStderr", "env"]);
  if (options.cwd !== undefined) shellString("cwd", options.cwd);
  if (options.pty !== undefined) checkSize(options.pty);
  const separateStreams = checkStreamOptions(options);
  const vars = checkProcessEnv(options.env);
  let streamsEnded: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (streamsEnded = resolve));
  const process = await processRegistry(env).spawn(command, {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.onOutput === undefined ? {} : { onOutput: options.onOutput }),
    ...(options.pty === undefined ? {} : { pty: options.pty }),
    separateStreams,
    env: vars,
    ...(options.onStdout === undefined ? {} : { onStdout: options.onStdout }),
    ...(options.onStderr === undefined ? {} : { onStderr: options.onStderr }),
    ...(separateStreams ? { onStreamsEnd: streamsEnded } : {}),
  });
  if (!separateStreams) streamsEnded();
  return new Handle(env, process, ended);
}

/** The signal's name for an exit code of 128 + n, the shell's convention. */
function signalOf(exitCode: number | undefined): string | undefined {
  if (exitCode === undefined || exitCode <= 128) return undefined;
  const number = exitCode - 128;
  return Object.entries(constants.signals).find(([, n]) => n === number)?.[0];
}

function checkSize(size: unknown): void {
  const { cols, rows } = (size ?? {}) as Partial<PtySize>;
  for (const [name, value] of [
    ["pty.cols", cols],
    ["pty.rows", rows],
  ] as const)
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 1000)
      throw new InvalidOptionError(name, `${name} must be an integer from 1 to 1000, got ${describe(value)}`);
}

class Handle implements SpawnedProcess {
  readonly #env: Environment;
  readonly #process: BackgroundProcess;
  readonly streamsEnded: Promise<void>;

  constructor(env: Environment, process: BackgroundProcess, streamsEnded: Promise<void>) {
    this.#env = env;
    this.#process = process;
    this.streamsEnded = streamsEnded;
  }

  get id(): string {
    return this.#process.id;
  }
  get pid(): number {
    return this.#process.pid;
  }
  get command(): string {
    return this.#process.command;
  }
  get status(): ProcessStatus {
    return this.#process.status;
  }
  get exitCode(): number | undefined {
    return this.#process.exitCode;
  }

  get #registry() {
    return processRegistry(this.#env);
  }

  #result(): ProcessResult | undefined {
    const { status, exitCode, output } = this.#process;
    return status === "running" ? undefined : { status, exitCode, signal: signalOf(exitCode), output };
  }

  async wait(options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<ProcessResult | undefined> {
    const { timeoutMs, signal } = options;
    if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || !(timeoutMs >= 0)))
      throw new InvalidOptionError(
        "timeoutMs",
        `timeoutMs must be a number of milliseconds, got ${describe(timeoutMs)}`,
      );
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    while (this.#process.status === "running" && signal?.aborted !== true) {
      const slice = Math.min(WAIT_SLICE_MS, deadline - Date.now());
      if (slice <= 0) break;
      await this.#registry.wait(this.#process, slice, signal);
    }
    return this.#result();
  }

  async kill(): Promise<void> {
    if (this.#process.status === "running") await this.#registry.kill(this.#process);
    else await this.#registry.reap(this.#process);
  }

  async signal(signal: ProcessSignal): Promise<void> {
    await this.#registry.signal(this.#process, checkSignal(signal));
  }

  async write(data: string): Promise<void> {
    if (typeof data !== "string") throw new InvalidOptionError("data", `data must be a string, got ${describe(data)}`);
    if (!(await this.#registry.write(this.#process, data)))
      throw new ProcessError(
        `Cannot write to ${this.id}: ${this.#process.status === "running" ? "its stdin was closed" : `it has ${this.#process.status}`}`,
        { backend: this.#env.backend },
      );
  }

  async closeStdin(): Promise<void> {
    await this.#registry.closeStdin(this.#process);
  }

  async logs(): Promise<string> {
    await this.#registry.refresh([this.#process]);
    return this.#process.output;
  }

  output(): AsyncIterable<string> {
    const env = this.#env;
    const process = this.#process;
    const wait = (signal: AbortSignal) => this.wait({ signal });
    return {
      async *[Symbol.asyncIterator]() {
        const queue: string[] = [];
        let ended = false;
        let wake: (() => void) | undefined;
        const { controller: follower, started } = followLog(
          env,
          process,
          (text) => {
            queue.push(text);
            wake?.();
          },
          () => {
            ended = true;
            wake?.();
          },
        );
        // A tail that cannot watch the pid (busybox) never ends: a wait learns the end, and the
        // follower reads on a little after it, for the last bytes.
        const waiting = new AbortController();
        wait(waiting.signal)
          .then((result) => {
            if (result !== undefined) setTimeout(() => follower.abort(), FOLLOW_AFTER_END_MS).unref();
          })
          .catch(() => undefined);
        try {
          for (;;) {
            const next = queue.shift();
            if (next !== undefined) {
              yield next;
              continue;
            }
            if (ended) {
              // Refused (a gateway at its bound of long-lived executions): the stream says so instead of ending empty.
              await started.catch((error: unknown) => {
                throw new ProcessError(`Cannot follow the output of ${process.id}: ${(error as Error).message}`, {
                  backend: env.backend,
                });
              });
              return;
            }
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
          }
        } finally {
          follower.abort();
          waiting.abort();
        }
      },
    };
  }
}
