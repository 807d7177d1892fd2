/**
 * The SSH backend: the system `ssh` client over one ControlMaster connection
 * per session. Every command is `ssh … host <outer shell line>` through the
 * master (about the cost of a local process, plus the remote shell's start);
 * the cwd comes back in the in-band marker, and a timeout or interrupt kills
 * the process group *on the host*, because killing the local client would
 * leave the remote command running.
 */

import type { CheckpointSupport } from "../../core/checkpoint-support.js";
import type { PortUrl } from "../../core/environment.js";
import { PortForwards } from "./port-forward.js";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BackendUnavailableError, SyncError } from "../../core/errors.js";
import {
  callMarks,
  CALL_MARK,
  markAssignments,
  newMarkValue,
  SESSION_MARK,
  type CallMarks,
} from "../../core/call-marks.js";
import { shellQuote } from "../../core/script.js";
import { originKey } from "../../core/login-snapshots.js";
import { MAX_INLINE_SCRIPT_BYTES } from "../../core/transport.js";
import type { FastPath, ProcessHandle, RunOptions, Transport, TreeKill } from "../../core/transport.js";
import type { FastPathRunner } from "../shared/fast-path/fast-path-runner.js";
import { SshFastPath } from "./fast-path.js";
import { spawnCollect, type ExecOptions, type ExecResult } from "./exec.js";
import { connectFailure, lost, unreachable } from "./connect-errors.js";
import type { FileSync } from "../../sync/file-sync.js";
import { SshCall, type CallEnd } from "./call.js";
import { controlArgs, describeTarget, killScript, sshArgs, sshTarget, wrapScript, type SshTarget } from "./command.js";
import { rsyncFileSync } from "./sync.js";
import { parseSweep, sweepScript } from "../../core/sweep-script.js";
import type { OwnerWatchdog } from "../shared/owner-watchdog.js";
import { guardSshOwnerDeath } from "./watchdog.js";
import { killGroupsFileLine } from "./remote-record.js";
import { RemoteGroups } from "./remote-groups.js";
import { parseSessionDir, sessionDirSetup } from "./session-dir.js";
import type { SshTransportOptions } from "./config.js";

/** Control calls (connect, kill, cleanup) that take longer than this are given up. */
const CONTROL_TIMEOUT_MS = 30_000;
/** How long a kill waits for a call that just started to report its remote group. */
const GROUP_WAIT_MS = 2000;

export class SshTransport implements Transport {
  readonly name = "ssh";
  readonly actsOnHost = true;
  readonly stdinMode = "pipe";
  readonly needsRemotePid = true;
  readonly #options: SshTransportOptions;
  #target!: SshTarget;
  readonly #forwards = new PortForwards((args) =>
    spawnCollect(this.#options.sshPath, args, undefined, CONTROL_TIMEOUT_MS),
  );
  #controlDir = "";
  #tempDir = "";
  #ownsTempDir = false;
  #envFile: string | undefined;
  #sync: FileSync | undefined;
  /** Remote process groups, killed at close. */
  readonly #groups = new RemoteGroups(() => this.#watchdog);
  /** Shared by every process of a session that outlives its owner (kept on the host), so close finds them all. */
  #sessionMark = newMarkValue();
  readonly #marks = new WeakMap<ProcessHandle, CallMarks>();
  /** Ends the remote side and the master if this process dies without close(). */
  #watchdog: OwnerWatchdog | undefined;
  #fast: SshFastPath | undefined;

  /** The same host, port, user, ssh options and `env`: the same login (core/login-snapshots.ts). */
  get loginOrigin(): string | undefined {
    if (this.#options.reuseLoginSnapshot === false) return undefined;
    const { host, user, port, keyPath, sshOptions, env, remoteTempDir, sshPath } = this.#options;
    return originKey(["ssh", host, user, port, keyPath, sshOptions, env, remoteTempDir, sshPath]);
  }

  constructor(options: SshTransportOptions) {
    this.#options = options;
  }

  get tempDir(): string {
    return this.#tempDir;
  }

  /** Every session on one host runs its login profile on that host's CPU. */
  get initGroup(): string {
    const { user, host, port } = this.#options;
    return `ssh:${user ?? ""}@${host}:${port ?? 22}`;
  }

  /** Where the master's socket lives (a private 0700 directory). */
  get controlPath(): string {
    return this.#target.controlPath;
  }

  /** The file sync, when configured: tests and tools may force it. */
  get fileSync(): FileSync | undefined {
    return this.#sync;
  }

  get #where(): string {
    return describeTarget(this.#options);
  }

  async start(): Promise<void> {
    // mkdtemp creates the directory 0700: nobody else may reach the master.
    this.#controlDir = await mkdtemp(join(tmpdir(), "shellwright-ssh-"));
    const o = this.#options;
    this.#target = sshTarget(o, join(this.#controlDir, "master"));

    const setup = sessionDirSetup(o.env, o.remoteTempDir, o.outliveOwner ? this.#sessionMark : undefined);
    let result: ExecResult;
    try {
      result = await this.#exec(setup.script, { stdin: setup.stdin });
    } catch (error) {
      await this.#closeMaster();
      throw error;
    }
    if (result.code !== 0) {
      await this.#closeMaster();
      throw new BackendUnavailableError(connectFailure(this.#where, result), { backend: this.name });
    }
    const { dir, keptMark } = parseSessionDir(result.stdout);
    this.#tempDir = dir;
    if (o.outliveOwner && keptMark !== undefined) this.#sessionMark = keptMark;
    if (!this.#tempDir.startsWith("/")) {
      await this.#closeMaster();
      throw new BackendUnavailableError(
        `SSH connection to ${this.#where} works, but the host gave no temp directory (got ${JSON.stringify(result.stdout.slice(0, 200))})`,
        { backend: this.name },
      );
    }
    this.#ownsTempDir = o.remoteTempDir === undefined;
    this.#watchdog = guardSshOwnerDeath({
      sshPath: o.sshPath,
      target: this.#target,
      controlDir: this.#controlDir,
      remote: o.outliveOwner
        ? undefined
        : { dir: this.#ownsTempDir ? this.#tempDir : undefined, mark: this.#sessionMark, groupsFile: this.#groupsFile },
    });
    if (setup.stdin !== undefined) this.#envFile = `${this.#tempDir}/env`;
    if (o.sync !== undefined)
      this.#sync = rsyncFileSync(o.sync, {
        ...o,
        target: this.#target,
        where: this.#where,
        exec: (c) => this.#exec(c),
      });
    this.#startFastPath();
  }

  /** The fast path, once its helper is on the host; undefined: every call takes the plain path. */
  get fastPath(): FastPath | undefined {
    return this.#fast?.fastPath;
  }

  /** The fast path's runner, once the helper is on the host (tests and benchmarks: readiness, killing the helper). */
  get fastPathRunner(): FastPathRunner | undefined {
    return this.#fast?.runner;
  }

  /** The remote pid of the running helper (tests). */
  get fastPathHelperPid(): number | undefined {
    return this.#fast?.helperPid;
  }

  #startFastPath(): void {
    if (this.#options.fastPath === false) return;
    this.#fast = SshFastPath.start({
      helperFile: this.#options.fastPathHelper,
      tempDir: this.#tempDir,
      sessionMark: this.#sessionMark,
      groupsFile: this.#groupsFile,
      helperArgs: (command) => sshArgs(this.#target, command),
      sshPath: this.#options.sshPath,
      exec: (command, options) => this.#exec(command, options),
      settle: (end) => this.#settle(end),
      onGroup: (group) => this.#groups.started(group),
      onGroupDone: (group, session) => this.#groups.finished(group, session),
    });
  }

  /** Every call's group, recorded on the host: for whoever closes a session that outlives this process, or `--prune`. */
  get #groupsFile(): string {
    return `${this.#tempDir}/groups`;
  }

  runBash(script: string, options: RunOptions): ProcessHandle {
    const marks = callMarks(this.#sessionMark);
    // stderr apart: the wrapper's group and exit lines share it with the command's, keyed by a nonce on stdin.
    const nonce = options.separateStreams === true ? randomBytes(12).toString("hex") : undefined;
    const wrap = {
      ...options,
      envFile: this.#envFile,
      marks: markAssignments(marks),
      groupsFile: this.#groupsFile,
      keyed: nonce !== undefined,
    };
    let command = wrapScript(script, wrap);
    let args: Promise<string[]>;
    if (Buffer.byteLength(command) <= MAX_INLINE_SCRIPT_BYTES) {
      args = Promise.resolve(sshArgs(this.#target, command));
    } else {
      const scriptFile = `${this.#tempDir}/script-${randomBytes(6).toString("hex")}.sh`;
      command = wrapScript(script, { ...wrap, scriptFile });
      args = this.#exec(`umask 077 && cat > ${shellQuote(scriptFile)}`, { stdin: script }).then((r) => {
        if (r.code !== 0) throw lost(this.#where, r.stderr, "while sending a long command");
        return sshArgs(this.#target, command);
      });
    }
    const call = new SshCall({
      sshPath: this.#options.sshPath,
      args,
      stdin:
        nonce === undefined
          ? options.stdin
          : Buffer.concat([Buffer.from(`${nonce}\n`), options.stdin ?? Buffer.alloc(0)]),
      nonce,
      backend: this.name,
      onGroup: (group) => this.#groups.started(group),
      onOuterExit: (group) => this.#groups.finished(group),
      settle: (end) => this.#settle(end),
    });
    this.#marks.set(call, marks);
    return call;
  }

  async killTree(handle: ProcessHandle, { signal, remotePid, remoteStartTime, graceMs }: TreeKill): Promise<boolean> {
    const fast = this.#fast?.kill(handle, signal, graceMs);
    if (fast !== undefined) return fast;
    const call = handle as SshCall;
    call.markKilled();
    // A call stopped right after it began may not have reported its group yet:
    // killing only the local client now could orphan the remote command.
    const group = remotePid === undefined ? await call.groupWithin(GROUP_WAIT_MS) : call.group;
    if (group === undefined && remotePid === undefined) {
      // Nothing started on the host (or it already ended).
      handle.kill();
      return false;
    }
    const marks = this.#marks.get(handle);
    const mark = marks === undefined ? undefined : `${CALL_MARK}=${marks.call}`;
    const kill = killScript({ group, pid: remotePid, startTime: remoteStartTime, mark }, signal, graceMs);
    const r = await this.#exec(kill, { timeoutMs: CONTROL_TIMEOUT_MS + graceMs });
    if (r.code !== 0 || signal === "KILL") handle.kill();
    return r.code === 0 && parseSweep(r.stdout).clean;
  }

  async beforeExecute(): Promise<void> {
    if (this.#sync === undefined) return;
    try {
      await this.#sync.sync();
    } catch (error) {
      if (!(error instanceof SyncError)) throw error;
      // The command still runs: a sync that failed is retried from scratch next time.
      this.#options.warn(error.message);
    }
  }

  async stop(): Promise<void> {
    // The helper and its launcher first: nothing new may start while the groups are killed.
    this.#fast?.stop();
    this.#fast = undefined;
    if (this.#controlDir === "") return;
    const cleanup = this.#endProcessLines();
    if (this.#ownsTempDir && this.#tempDir !== "") cleanup.push(`rm -rf -- ${shellQuote(this.#tempDir)}`);
    await this.#exec([...cleanup, "true"].join("\n"), { timeoutMs: 10_000 }).catch(() => undefined);
    await this.#closeMaster();
    this.#forwards.forget();
    this.#watchdog?.release();
    this.#watchdog = undefined;
  }

  /**
   * Ends the session's processes on the host (what stop() ends) and restarts the fast path: a rollback's
   * step before it puts the saved snapshot back (docs/branching.md).
   */
  async endProcesses(): Promise<void> {
    this.#fast?.stop();
    this.#fast = undefined;
    await this.#exec([...this.#endProcessLines(), "true"].join("\n"), { timeoutMs: 10_000 });
    this.#startFastPath();
  }

  /**
   * The lines that end the session's processes on the host: background children of its calls (as on the local
   * backend), groups of earlier processes on this session (a named session's earlier execs), and everything
   * carrying its mark, however it detached from its call's group.
   */
  #endProcessLines(): string[] {
    const lines = [...this.#groups.takeCleanup(), killGroupsFileLine(this.#groupsFile)];
    lines.push(`bash -c ${shellQuote(sweepScript({ marks: [`${SESSION_MARK}=${this.#sessionMark}`] }, "KILL", 0))}`);
    return lines;
  }

  /** Set by open.ts (shared/snapshot-checkpoints.ts): checkpoints of the shell state. */
  checkpoints: CheckpointSupport | undefined;

  /** A local forward on the session's master (port-forward.ts); stop() ends it with the master. */
  portUrl(port: number): Promise<PortUrl> {
    return this.#forwards.url(this.#target, port);
  }

  /** The owner watchdog's pid, while the session is open. */
  get watchdogPid(): number | undefined {
    return this.#watchdog?.pid;
  }

  async #closeMaster(): Promise<void> {
    await spawnCollect(this.#options.sshPath, controlArgs(this.#target, "exit"), undefined, 5000).catch(
      () => undefined,
    );
    await rm(this.#controlDir, { recursive: true, force: true });
    this.#controlDir = "";
  }

  /** A call ended without the outer shell's exit line: stopped on purpose, the remote shell died, or the connection did. */
  async #settle(end: CallEnd): Promise<number> {
    if (end.killed || end.clientCode !== 255) return end.clientCode;
    const master = await spawnCollect(this.#options.sshPath, controlArgs(this.#target, "check"), undefined, 5000).catch(
      () => undefined,
    );
    if (
      master?.code === 0 &&
      !/closed by remote host|Connection (?:reset|refused|closed|timed out)|Broken pipe|mux_client/i.test(end.stderr)
    ) {
      return 255; // the remote shell itself was killed (e.g. `kill -9 0`); the connection is fine
    }
    if (!end.started) throw unreachable(this.#where, end.stderr);
    throw lost(this.#where, end.stderr, "during the command");
  }

  /** Runs a short remote command over the master and collects its output. */
  #exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    return spawnCollect(
      this.#options.sshPath,
      sshArgs(this.#target, command),
      options.stdin,
      options.timeoutMs ?? CONTROL_TIMEOUT_MS,
    );
  }
}
