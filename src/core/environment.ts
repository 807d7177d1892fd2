/**
 * The contract of a shell session, whoever runs the session model.
 *
 * `Session` runs it in this process over a Transport. A gateway environment
 * runs it in a `shellwright serve` process and talks HTTP to it. Callers (the
 * tools, the CLI, users) depend on this module only, so both are
 * interchangeable. It is a leaf: it imports the error and option helpers and
 * nothing that implements a session, so implementations can import it
 * without an import cycle.
 */

import { InvalidOptionError } from "./errors.js";
import { describe, positiveNumber, shellString } from "./options.js";
import type { Checkpoint, CheckpointOptions, ForkOptions, RollbackOptions } from "./checkpoint.js";
import type { ProcessAttachRequest, ProcessChannel } from "./process-channel.js";

/** Files a session keeps inside the backend. */
export interface SessionPaths {
  readonly snapshot: string;
  /** @deprecated No longer written: the snapshot carries the cwd. Kept so older code still compiles. */
  readonly cwdFile: string;
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
   * Keep stdout and stderr apart: the result then has `stdout` and `stderr`
   * beside the merged `output`, within the same `maxOutputBytes` (docs/sdk.md).
   * Implied by `onStdout` or `onStderr`. @default false
   */
  separateStreams?: boolean;
  /** stdout as it arrives, apart from stderr (implies separateStreams). */
  onStdout?: (text: string) => void;
  /** stderr as it arrives, apart from stdout (implies separateStreams). */
  onStderr?: (text: string) => void;
  /**
   * Run from the session's state but leave it untouched: the command's env and
   * cwd changes are not saved. For helper commands (the file tools, execute_code's
   * plumbing) that must not race with the agent's own commands: under the
   * last-writer-wins rule a helper that finishes late would otherwise undo an
   * `export` made by a command that ran beside it.
   * @default false
   */
  isolated?: boolean;
  /**
   * This call lasts as long as something it serves (a background process's
   * output follower or end watcher), not as long as a command the caller
   * waits for. A gateway counts it apart from its calls in flight, against a
   * bound per session of its own (docs/gateway.md). A call both long-lived and
   * `isolated` does not hold off a checkpoint, rollback or fork of the session
   * (docs/branching.md); any other call does while it runs.
   * @default false
   */
  longLived?: boolean;
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
  /**
   * With `separateStreams`: the command's stdout and stderr, each in its own
   * order, each bounded (its cuts said inline); the notices (a timeout, an
   * interrupt) are in `output` only. Absent otherwise.
   */
  stdout?: string;
  stderr?: string;
}

/** Where this process reaches a port of the backend (`portUrl(env, port)`, docs/sdk.md). */
export interface PortUrl {
  /** `http://host:port` (a cloud's preview URL: https); use another scheme (ws://) on the same address as needed. */
  url: string;
  /** Headers a request needs (a private Daytona sandbox's preview token). A secret when set: do not log it. */
  headers: Record<string, string>;
}

/** A TCP port number, validated once where every implementation of `portUrl` starts. */
export function checkPort(port: unknown): number {
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new InvalidOptionError("port", `port must be an integer from 1 to 65535, got ${describe(port)}`);
  return port;
}

export interface Environment {
  /** The session id (12 hex digits); it also names the snapshot files. */
  readonly id: string;
  /** The backend's name: "local", "docker", …, "gateway". */
  readonly backend: string;
  /**
   * True where a command acts on a real machine (local, ssh) rather than a
   * box that is its own boundary: the terminal tool's approval hook is
   * consulted there.
   */
  readonly actsOnHost: boolean;
  /**
   * True where the session sees the files of the process that opened it
   * (local): a file this process writes on the host, the tools can read.
   */
  readonly sharesHostFiles: boolean;
  /** The session's cwd after the last command that finished. */
  readonly cwd: string;
  /** False when init failed and commands run as `bash -l -c` without a snapshot. */
  readonly snapshotReady: boolean;
  readonly closed: boolean;
  /** The snapshot and cwd files, as paths inside the backend. */
  readonly paths: SessionPaths;
  /**
   * Values the tools mask in what a model sees: the `secrets` option and the
   * secret-looking variables passed through `env` / `forwardEnv`. Never
   * printed, logged or sent anywhere. Optional so that an Environment written
   * elsewhere still fits; missing means none (key shapes are masked anyway).
   */
  readonly secretValues?: readonly string[];
  state(): SessionState;
  execute(command: string, options?: ExecuteOptions): Promise<ExecuteResult>;
  /**
   * Runs `hook` when the environment closes, while commands still work (the
   * tools' process registry kills background processes this way). Returns a
   * function that removes it.
   */
  beforeClose(hook: () => Promise<void> | void): () => void;
  close(): Promise<void>;
  /**
   * Where this process reaches `port` of the backend, when the backend can
   * give one (an UnsupportedError otherwise). Optional so that an Environment
   * written elsewhere still fits; `portUrl(env, port)` is the door callers use.
   */
  portUrl?(port: number): Promise<PortUrl>;
  /**
   * The path inside the backend of the session's one copy of the helper
   * (native/swmux.c: PTYs, `swmux -p`), installed on first use: the fast
   * path's own copy when it has one, else one copied in through `execute`.
   * Optional so that an Environment written elsewhere still fits; without it
   * there are no PTYs.
   */
  helperPath?(): Promise<string>;
  /**
   * A live line to a background process a call of this session started, through the session's fast-path helper
   * (core/process-channel.ts); undefined when there is none now (the plain path, no helper, a gateway): use
   * `execute`. Optional so that an Environment written elsewhere still fits.
   */
  attachProcess?(request: ProcessAttachRequest): ProcessChannel | undefined;
  /** The workspace root checkpoints copy, when one was declared (docs/branching.md). */
  readonly workspaceRoot: string | undefined;
  /**
   * Saves the shell state (and the declared workspace's files); refused while a
   * command runs. Where the backend has no checkpoints, this and the four
   * below fail with an UnsupportedError naming it (docs/branching.md).
   */
  checkpoint(options?: CheckpointOptions): Promise<Checkpoint>;
  /** Returns to a checkpoint of this session; ends its background processes and PTYs first. */
  rollback(checkpoint: Checkpoint, options?: RollbackOptions): Promise<void>;
  /** `count` new sessions from this one's state and files now, each independent of it and of each other. */
  fork(options: ForkOptions): Promise<Environment[]>;
  /** This session's checkpoints not yet released, oldest first. */
  checkpoints(): Checkpoint[];
  /** Removes a checkpoint's copies; it can no longer be rolled back to. */
  releaseCheckpoint(checkpoint: Checkpoint): Promise<void>;
}

/**
 * Validates execute options. Every implementation calls it, so a bad option
 * fails the same way whether the session runs here or behind a gateway.
 */
export function normalizeExecuteOptions(options: ExecuteOptions, defaultTimeoutMs: number) {
  if (typeof options !== "object" || options === null) {
    throw new InvalidOptionError("options", `execute options must be an object, got ${describe(options)}`);
  }
  const known = [
    "cwd",
    "timeoutMs",
    "stdin",
    "signal",
    "onOutput",
    "isolated",
    "longLived",
    "separateStreams",
    "onStdout",
    "onStderr",
  ];
  for (const key of Object.keys(options)) {
    if (!known.includes(key))
      throw new InvalidOptionError(key, `Unknown execute option ${describe(key)}; known options: ${known.join(", ")}`);
  }
  const cwd = options.cwd === undefined ? undefined : shellString("cwd", options.cwd);
  const timeoutMs = positiveNumber("timeoutMs", options.timeoutMs, defaultTimeoutMs);
  let stdin: Uint8Array | undefined;
  if (typeof options.stdin === "string") stdin = Buffer.from(options.stdin, "utf8");
  else if (options.stdin instanceof Uint8Array) stdin = options.stdin;
  else if (options.stdin !== undefined)
    throw new InvalidOptionError("stdin", `stdin must be a string or a Uint8Array, got ${describe(options.stdin)}`);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new InvalidOptionError("signal", `signal must be an AbortSignal, got ${describe(options.signal)}`);
  }
  if (options.onOutput !== undefined && typeof options.onOutput !== "function") {
    throw new InvalidOptionError("onOutput", `onOutput must be a function, got ${describe(options.onOutput)}`);
  }
  for (const key of ["isolated", "longLived", "separateStreams"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "boolean")
      throw new InvalidOptionError(key, `${key} must be a boolean, got ${describe(options[key])}`);
  }
  for (const name of ["onStdout", "onStderr"] as const)
    if (options[name] !== undefined && typeof options[name] !== "function")
      throw new InvalidOptionError(name, `${name} must be a function, got ${describe(options[name])}`);
  return {
    cwd,
    timeoutMs,
    stdin,
    signal: options.signal,
    onOutput: options.onOutput,
    isolated: options.isolated === true,
    longLived: options.longLived === true,
    separateStreams:
      options.separateStreams === true || options.onStdout !== undefined || options.onStderr !== undefined,
    onStdout: options.onStdout,
    onStderr: options.onStderr,
  };
}
