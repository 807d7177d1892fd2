/**
 * The seam between the session model and a backend. A Transport knows only how
 * to run `bash -c SCRIPT` somewhere and how to stop what it started; the
 * snapshot model lives in Session and nowhere else.
 */

import type { PortUrl } from "./environment.js";
import type { CheckpointSupport } from "./checkpoint-support.js";
import type { ProcessAttachRequest, ProcessChannel } from "./process-channel.js";

export interface RunOptions {
  /** Bytes for the command's stdin; absent means an empty stdin (never an open pipe). */
  stdin?: Uint8Array;
  /**
   * Start bash with an empty environment: once the snapshot exists it is the
   * whole truth about exported variables, so `unset X` sticks even for a
   * variable the backend's own environment would bring back.
   */
  cleanEnv: boolean;
  /**
   * The session's deadline for this call. The session enforces it itself; a
   * backend may pass it on (plus a margin) as a server-side backstop, for when
   * this process dies before it can kill the command.
   */
  timeoutMs?: number;
  /** Keep the command's stderr apart: the handle's `stderr` carries it (ExecuteOptions.separateStreams). */
  separateStreams?: boolean;
}

/** A running `bash -c`: a child process, or an SDK call adapted to look like one. */
export interface ProcessHandle {
  /** stdout and stderr merged in order, as raw bytes; stdout alone when the run asked for separateStreams. */
  readonly output: AsyncIterable<Uint8Array>;
  /** With separateStreams: stderr, as raw bytes. */
  readonly stderr?: AsyncIterable<Uint8Array>;
  /** Resolves with the exit code (128 + signal number when killed by a signal). */
  wait(): Promise<number>;
  /** Best effort, never throws: stops the local end (client process or SDK call). */
  kill(): void;
}

export type KillSignal = "TERM" | "KILL";

/** One round of Transport.killTree: the signal, the wrapper's PID inside the backend where it printed one, the grace. */
export interface TreeKill {
  signal: KillSignal;
  remotePid: number | undefined;
  /** That wrapper's start time (`/proc/PID/stat` field 22), where it printed one: a PID with another is a newcomer. */
  remoteStartTime?: string | undefined;
  /** How long a TERM waits before it escalates to KILL inside the backend. */
  graceMs: number;
}

/**
 * A script longer than this many bytes must not travel as one argv string
 * (Linux caps a single argument at 128 KiB): backends send it through a file
 * or on stdin instead.
 */
export const MAX_INLINE_SCRIPT_BYTES = 100_000;

/**
 * Direct access to the backend's files, for backends that share our
 * filesystem. Synchronous on purpose: renames then happen in the order calls
 * finish, which is what "the last call to finish sets the env" needs, and each
 * costs microseconds. None of them throws.
 */
export interface BackendFiles {
  readText(path: string): string | undefined;
  /** Atomic rename that replaces `to`; false when it could not be done. */
  rename(from: string, to: string): boolean;
  remove(path: string): void;
}

export interface Transport {
  readonly name: string;
  /**
   * Where this transport's login shell starts, as an opaque key: the same key
   * means the same user on the same machine or image, with the same starting
   * environment (login-snapshots.ts). Sessions of one origin reuse one login
   * snapshot while the profile files are unchanged; undefined: every session
   * runs its own login.
   */
  readonly loginOrigin?: string | undefined;
  /** True where a command acts on a real machine (Environment.actsOnHost). */
  readonly actsOnHost?: boolean;
  /** True where the session sees this process's files (Environment.sharesHostFiles). */
  readonly sharesHostFiles?: boolean;
  /** How stdin data reaches the command: on the process's pipe, or embedded in the script. */
  readonly stdinMode: "pipe" | "heredoc";
  /** Directory inside the backend for the snapshot and cwd files; valid after start(). */
  readonly tempDir: string;
  /** When set, the session renames and reads its files directly instead of with `mv` in the script. */
  readonly files?: BackendFiles;
  /** True when the wrapper must print its PID first so killTree can find it inside the backend. */
  readonly needsRemotePid?: boolean;
  /**
   * Sessions whose inits (the login profile) compete for one machine's CPU share this name, and run a few of
   * those inits at a time (core/init-gate.ts). Unset where each session has a machine of its own.
   */
  readonly initGroup?: string;
  /** A faster way to run calls, when the backend has one and it is on (docs/fast-path.md). */
  readonly fastPath?: FastPath | undefined;
  /**
   * How long the rest of a call's output (its end marker) may still arrive after its exit is reported, when the
   * stream has not ended. Default 250 ms: a process's pipe holds its output before it exits. An SDK reports the
   * exit and streams the output on separate channels, which nothing orders.
   */
  readonly outputAfterExitMs?: number;

  start(): Promise<void>;
  runBash(script: string, options: RunOptions): ProcessHandle;
  /**
   * Kill every process the call started, where it runs, however it detached
   * (docs/guarantees.md, "Processes"); without it the session falls back to
   * handle.kill(). A TERM escalates to KILL by itself for what is still there
   * after graceMs. Resolves true when the backend saw nothing of the call
   * left; anything else makes the session send a KILL round too.
   */
  killTree?(handle: ProcessHandle, kill: TreeKill): Promise<boolean | void>;
  /**
   * Called before each command (file sync, waking a stopped sandbox). Resolves
   * "restarted" when the backend had to be replaced and its files are gone:
   * the session then captures a fresh snapshot before the command.
   */
  beforeExecute?(): Promise<"restarted" | undefined | void>;
  stop(): Promise<void>;
  /**
   * Where this process reaches `port` inside the backend (loopback, a published or forwarded port, a
   * cloud's preview URL). Absent: the backend has none to give. A forward it opens is closed by stop().
   */
  portUrl?(port: number): Promise<PortUrl>;
  /** Checkpoints, rollback and fork, where the backend offers them (core/checkpoint.ts). */
  readonly checkpoints?: CheckpointSupport | undefined;
  /**
   * Which box (sandbox) runs the session's programs now, where the backend may replace it under the session
   * (a lost sandbox, a rollback): a path into the previous one, such as the helper's copy, is stale once it changes.
   */
  readonly boxId?: string | undefined;
}

/** How a fast-path call ended, as the helper reported it. */
export interface FastCallEnd {
  /** The command's exit status (128 + signal when it was killed). */
  status: number;
  /** The job dumped its state completely and the call was not killed (its state is now the snapshot's). */
  committed: boolean;
  /** After a committed call: the session's cwd (absent: unchanged, or too long to carry). */
  cwd?: string | undefined;
  /** The call completed but its state could not be saved: why, in words. */
  saveFailed?: string | undefined;
  /** A kill reached the job before it finished. */
  killed: boolean;
  /** False when the helper never started the job (its launcher or the helper died first): run it on the plain path. */
  started: boolean;
  /**
   * The launcher (or the helper) died between receiving the job and reporting
   * it, so the job may have run: the call fails and is never run again.
   */
  uncertain?: boolean;
  /** A process (a background child) is still in the job's process group: the session ends it at close. */
  groupLeft: boolean;
}

/** A call running on the fast path. Its output ends when the call ends, never later. */
export interface FastCallHandle extends ProcessHandle {
  readonly end: Promise<FastCallEnd>;
}

export interface FastCallRequest {
  /** The session's snapshot: the state the helper's launcher starts from and commits to. */
  snapshot: string;
  /** The job script (core/fast-script.ts). */
  script: string;
  /** The command's stdin; absent means /dev/null. */
  stdin?: Uint8Array;
  /** Keep the command's stderr apart: the handle's `stderr` carries it. */
  separateStreams?: boolean;
}

/**
 * Optional capability of a transport: a long-lived helper that runs calls
 * without a new bash each (docs/fast-path.md). The session asks per call and
 * uses the plain path whenever it answers undefined.
 */
export interface FastPath {
  /** Starts the helper for this snapshot in the background, so the next call can use it. */
  prepare(snapshot: string): void;
  /** A handle running the call, or undefined: use the plain path now. Never throws. */
  tryRun(request: FastCallRequest): FastCallHandle | undefined;
  /**
   * Resolves true once calls would take the fast path, false when the helper
   * could not start (calls take the plain path). Optional: a pool waits on it
   * before it hands a member out (src/pool/warm.ts).
   */
  whenReady?(): Promise<boolean>;
  /**
   * How many of this session's helpers have died so far (crashed, killed,
   * their box or connection gone; not stopped by the session). Optional: a
   * pool hands out no member whose helper died after it was counted warm.
   */
  readonly helperExits?: number;
  /**
   * The path inside the backend of the helper this fast path runs (its copy
   * there, or on local the build it runs in place), once it is there;
   * undefined when it has none. Optional: the session's one helper
   * (Environment.helperPath) is this when it is defined.
   */
  helperPath?(): Promise<string | undefined>;
  /** A live line to a process one of this helper's calls started (Environment.attachProcess); undefined: none now. */
  attach?(request: ProcessAttachRequest): ProcessChannel | undefined;
}
