/**
 * The local backend: `bash` on this machine, each call in its own process
 * group and session, with the call's and the session's marks in its
 * environment, and in the session's cgroup where the host allows one, so a
 * timeout, an interrupt or close() can find every process it started.
 */

import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { callMarks, CALL_MARK, markEnv, newMarkValue, type CallMarks } from "../../core/call-marks.js";
import { SweepHits } from "../shared/sweep-hits.js";
import { SpawnError } from "../../core/errors.js";
import { checkBash, requirePosix } from "./preflight.js";
import { localFiles } from "./files.js";
import { fastTempRoot, findBash } from "./paths.js";
import { makeStateDir } from "./state-dir.js";
import { groupAlive, killGroup, reusedPid, startTimeOf } from "./process-groups.js";
import { hideFromSandboxes } from "./sandbox/private-paths.js";
import { LocalSandbox } from "./sandbox/sandbox.js";
import {
  type BackendFiles,
  type TreeKill,
  type ProcessHandle,
  type RunOptions,
  type Transport,
} from "../../core/transport.js";
import { endSessionProcesses, runSweep } from "./process-sweep.js";
import { SessionCgroup } from "./session-cgroup.js";
import type { OwnerWatchdog } from "../shared/owner-watchdog.js";
import { ENDED_GROUP_TAG, guardOwnerDeath } from "./owner-cleanup.js";
import { SANDBOX_DIR_PREFIX } from "./paths.js";
import { writeOwner } from "../shared/owner.js";
import { killRecordedGroups, recordGroup, sharedSessionMark } from "./groups-file.js";
import type { FastPathRunner } from "../shared/fast-path/fast-path-runner.js";
import { localFastPath } from "./fast-path.js";
import type { LocalTransportOptions } from "./config.js";
import type { FastPath } from "../../core/transport.js";
import type { CheckpointSupport } from "../../core/checkpoint-support.js";
import { localPortUrl } from "./port-url.js";
import { bashArgs, startEnv } from "./bash-args.js";
import { originKey } from "../../core/login-snapshots.js";

interface LocalHandle extends ProcessHandle {
  readonly pid: number | undefined;
  /** The wrapper's start time, read at spawn: a late kill must not take a newcomer on its PID for it. */
  readonly startTime: string | undefined;
  readonly marks: CallMarks;
}

export class LocalTransport implements Transport {
  readonly name = "local";
  readonly actsOnHost = true;
  readonly sharesHostFiles = true;
  /** Every local session runs its login profile on this machine's CPU. */
  readonly initGroup = "local";
  readonly stdinMode = "pipe";
  readonly files: BackendFiles = localFiles;
  /** Set by open.ts (checkpoint.ts): checkpoints, rollback and fork. */
  checkpoints: CheckpointSupport | undefined;
  readonly #options: LocalTransportOptions;
  #stateDir = "";
  #ownsStateDir = false;
  #bash = "";
  #sandbox: LocalSandbox | undefined;
  #unhideStateDir: () => void = () => undefined;
  /** Process groups that may still have members (a backgrounded child outlives its call). */
  readonly #groups = new Set<number>();
  /**
   * Groups of ended fast-path jobs with a process left in them. Their leader
   * is gone, so a live process with that PID is a newcomer (Linux reuses a
   * PID only once no group is named after it): ours only while it is unused.
   */
  readonly #endedGroups = new Set<number>();
  /** Shared by every process of a session that outlives its owner (sharedSessionMark), so close finds them all. */
  #sessionMark = newMarkValue();
  #cgroup: SessionCgroup | undefined;
  /** Ends the session's processes (and its own state dir) if this process dies without close(). */
  #watchdog: OwnerWatchdog | undefined;
  #fast: FastPathRunner | undefined;
  readonly #hits = new SweepHits();

  constructor(options: LocalTransportOptions) {
    this.#options = options;
  }

  get tempDir(): string {
    return this.#stateDir;
  }

  /** Groups go to the groups file for `close` of a dir that outlives us, or `--prune`; not a sandbox's, which its
   * jobs can write (they die with the owner: bwrap --die-with-parent) to make `--prune` kill outside it. */
  get #recordsGroups(): boolean {
    return !this.#ownsStateDir || (this.#watchdog !== undefined && this.#sandbox === undefined);
  }

  async start(): Promise<void> {
    requirePosix();
    this.#bash = this.#options.bashPath ?? findBash();
    await checkBash(this.#bash, this.#options.bashPath !== undefined);
    if (this.#options.stateDir === undefined) {
      this.#stateDir = await makeStateDir(this.#options.sandbox === undefined ? undefined : SANDBOX_DIR_PREFIX);
      this.#ownsStateDir = true;
    } else {
      this.#stateDir = this.#options.stateDir;
      mkdirSync(this.#stateDir, { recursive: true, mode: 0o700 });
    }
    // The sandboxes this process starts hide it by name: an explicit one may be outside the dirs every sandbox
    // covers, and a default one is brought back with its dir when a sandbox makes that dir writable.
    this.#unhideStateDir = hideFromSandboxes(this.#stateDir);
    // First: a sandbox that cannot start leaves nothing else to undo.
    if (this.#options.sandbox !== undefined) {
      // Writable inside the sandbox, so it must be unreadable to everyone else outside it.
      chmodSync(this.#stateDir, 0o700);
      const { cwd = process.cwd(), workspace } = this.#options;
      const start = { cwd, stateDir: this.#stateDir, privateRoot: fastTempRoot(), bash: this.#bash, workspace };
      this.#sandbox = await LocalSandbox.open(this.#options.sandbox, start).catch((error: unknown) => {
        if (this.#ownsStateDir) rmSync(this.#stateDir, { recursive: true, force: true });
        this.#unhideStateDir();
        throw error;
      });
    }
    if (this.#options.outliveOwner && !this.#ownsStateDir)
      this.#sessionMark = sharedSessionMark(this.#stateDir, this.#sessionMark) ?? this.#sessionMark;
    this.#cgroup = SessionCgroup.create();
    if (!this.#options.outliveOwner) {
      const o = { bash: this.#bash, stateDir: this.#stateDir, ownsStateDir: this.#ownsStateDir };
      const keepsWorkspace = this.#sandbox?.overlay !== undefined;
      this.#watchdog = guardOwnerDeath({
        ...o,
        sessionMark: this.#sessionMark,
        cgroupPath: this.#cgroup?.path,
        keepsWorkspace,
        sandboxed: this.#sandbox !== undefined,
      });
    }
    // A stray dir's owner tells `shellwright sessions --prune` whether it is still in use.
    if (this.#ownsStateDir) writeOwner(this.#stateDir);
    this.#startFastPath();
  }

  /** The fast path, when it is on and its helper was built; undefined: every call takes the plain path. */
  get fastPath(): FastPath | undefined {
    return this.#fast;
  }

  /** The fast path's runner (tests and benchmarks: readiness, killing the helper). */
  get fastPathRunner(): FastPathRunner | undefined {
    return this.#fast;
  }

  #startFastPath(): void {
    if (this.#options.fastPath === false) return;
    this.#fast = localFastPath({
      helper: this.#options.fastPathHelper,
      bash: this.#bash,
      sessionMark: this.#sessionMark,
      workDir: this.#stateDir,
      cgroupPath: this.#cgroup?.path,
      sandbox: this.#sandbox,
      onHelper: (pid) => {
        this.#cgroup?.adopt(pid);
        this.#addGroup(pid);
      },
      onJob: (pid) => {
        if (!this.#ownsStateDir) recordGroup(this.#stateDir, pid);
      },
      watchdog: () => this.#watchdog,
      guard: (pid, ended = false) => {
        if (ended) this.#endedGroups.add(pid);
        this.#watchdog?.addGroup(ended ? `${ENDED_GROUP_TAG}${pid}` : pid);
        if (this.#ownsStateDir && this.#recordsGroups) recordGroup(this.#stateDir, pid);
      },
    });
  }

  /** A call's group (or the helper's): ended at close, by the owner watchdog, or by `close`/`--prune` of the dir. */
  #addGroup(pid: number): void {
    this.#groups.add(pid);
    this.#watchdog?.addGroup(pid);
    if (this.#recordsGroups) recordGroup(this.#stateDir, pid);
  }

  /** The owner watchdog's pid, while the session is open. */
  get watchdogPid(): number | undefined {
    return this.#watchdog?.pid;
  }

  /** The same user, bash, sandbox, starting environment and directory: the same login (core/login-snapshots.ts). */
  get loginOrigin(): string | undefined {
    if (this.#options.reuseLoginSnapshot === false || this.#bash === "") return undefined;
    const env = Object.entries(startEnv(this.#options.env)).sort(([a], [b]) => (a < b ? -1 : 1));
    return originKey(["local", process.getuid?.(), this.#bash, process.cwd(), this.#options.sandbox ?? null, env]);
  }

  /** The session's sandbox, when it has one. */
  get sandbox(): LocalSandbox | undefined {
    return this.#sandbox;
  }

  runBash(script: string, options: RunOptions): LocalHandle {
    const { args, scriptFile } = bashArgs(script, this.#stateDir, this.#cgroup?.path);
    const marks = callMarks(this.#sessionMark);

    // SHLVL=1: Debian's bash reads ~/.bashrc when stdin is a socket (as if run
    // by sshd), and Node's stdin pipe is a socketpair; a shell level above 1 turns that off.
    // Shellwright's own tokens are not the session's to read (src/core/credentials.ts).
    // The first shell gets the same guard when this process has no shell level of its own.
    const env = { ...(options.cleanEnv ? { SHLVL: "1" } : startEnv(this.#options.env)), ...markEnv(marks) };
    const launch = this.#sandbox?.wrap([this.#bash, ...args], env) ?? { argv: [this.#bash, ...args], env };
    const child = spawn(launch.argv[0]!, launch.argv.slice(1), {
      detached: true, // its own process group: the unit a timeout kills
      stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", options.separateStreams ? "pipe" : "ignore"],
      env: launch.env,
    });
    const pid = child.pid;
    // Read before this process reaps it (only the event loop does), so it is the wrapper's.
    const startTime = pid === undefined ? undefined : startTimeOf(pid);
    // Also covers what a login shell's profile starts before the script runs.
    if (pid !== undefined) this.#cgroup?.adopt(pid);
    // A pipe's Readable is a net.Socket, which can be unref'd.
    const stdout = child.stdout as unknown as NodeJS.ReadableStream & AsyncIterable<Uint8Array> & { unref(): void };
    if (pid !== undefined) this.#addGroup(pid);
    if (options.stdin !== undefined && child.stdin) {
      child.stdin.on("error", () => undefined); // the command may exit without reading it all
      child.stdin.end(options.stdin);
    }

    const exited = new Promise<number>((resolve, reject) => {
      child.once("error", (error) => {
        reject(new SpawnError(`Could not run ${this.#bash}: ${error.message}`, { cause: error, backend: this.name }));
      });
      child.once("exit", (code, signal) => {
        if (scriptFile !== undefined) localFiles.remove(scriptFile);
        if (pid !== undefined && !groupAlive(pid)) {
          this.#groups.delete(pid);
          this.#watchdog?.forgetGroup(pid);
        }
        // A backgrounded child may hold the pipe open for hours: let it, without
        // keeping this process alive for it.
        stdout.unref();
        (child.stderr as unknown as { unref(): void } | null)?.unref();
        resolve(code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0));
      });
    });

    return {
      pid,
      startTime,
      marks,
      output: stdout,
      ...(child.stderr ? { stderr: child.stderr as unknown as AsyncIterable<Uint8Array> } : {}),
      wait: () => exited,
      kill: () => {
        try {
          child.kill("SIGKILL");
        } catch {
          // already gone
        }
      },
    };
  }

  /**
   * TERM or KILL to the call's group, session and marked processes (and their
   * children), wherever they went; a TERM escalates to KILL after graceMs.
   * Resolves true when nothing the call started is left.
   */
  async killTree(handle: ProcessHandle, { signal, graceMs }: TreeKill): Promise<boolean> {
    const fast = this.#fast?.kill(handle, signal, graceMs);
    if (fast !== undefined) return fast;
    const local = handle as LocalHandle;
    if (local.pid === undefined) {
      handle.kill();
      return false;
    }
    // A group still led by the wrapper's PID keeps that PID from reuse; one that emptied does not.
    if (!reusedPid(local.pid, local.startTime)) killGroup(local.pid, signal);
    const leaders = [local.pid];
    const target = { marks: [`${CALL_MARK}=${local.marks.call}`], root: local.pid, rootStartTime: local.startTime };
    const result = await this.#hits.sweep(handle, { ...target, groups: leaders, sessions: leaders }, (withHits) =>
      runSweep(this.#bash, withHits, signal, graceMs),
    );
    return result.clean;
  }

  /** Ends every process of the session as stop() does, then starts a new fast path unless told not to (a rollback's first step). */
  async endProcesses(restartFastPath = true): Promise<void> {
    await this.#endProcesses();
    if (restartFastPath) this.#startFastPath();
  }

  /** Stops the fast path (its launcher holds the session's cwd) until resumeFastPath; calls take the plain path meanwhile. */
  pauseFastPath(): void {
    this.#fast?.stop();
    this.#fast = undefined;
  }

  resumeFastPath(): void {
    if (this.#fast === undefined) this.#startFastPath();
  }

  async stop(): Promise<void> {
    await this.#endProcesses();
    if (this.#cgroup !== undefined) {
      this.#cgroup.remove();
      this.#cgroup = undefined;
    }
    // Groups of earlier processes that shared this state dir (a named session's earlier execs).
    if (!this.#ownsStateDir && this.#stateDir !== "") killRecordedGroups(this.#stateDir);
    await this.#sandbox?.stop();
    if (this.#ownsStateDir) rmSync(this.#stateDir, { recursive: true, force: true });
    this.#unhideStateDir();
    this.#watchdog?.release();
    this.#watchdog = undefined;
  }

  async #endProcesses(): Promise<void> {
    // The helper and its launcher first: nothing new may start while the groups are killed.
    this.#fast?.stop();
    this.#fast = undefined;
    await endSessionProcesses(this.#bash, this.#sessionMark, this.#groups, this.#endedGroups);
    await this.#cgroup?.killAll();
  }

  portUrl(port: number) {
    return localPortUrl(port, this.#options.sandbox);
  }

  /** Groups of ended fast-path jobs that still had a process at their end (tests and diagnostics). */
  get endedGroups(): number[] {
    return [...this.#endedGroups];
  }

  /** The session cgroup, when there is one (tests and diagnostics). */
  get cgroupPath(): string | undefined {
    return this.#cgroup?.path;
  }
}
