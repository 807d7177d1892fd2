/**
 * The SSH backend: the system `ssh` client over one ControlMaster connection
 * per session. Every command is `ssh … host <outer shell line>` through the
 * master (about the cost of a local process, plus the remote shell's start);
 * the cwd comes back in the in-band marker, and a timeout or interrupt kills
 * the process group *on the host*, because killing the local client would
 * leave the remote command running.
 */

import type { PortUrl } from "../../core/environment.js";
import { PortForwards } from "./port-forward.js";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BackendUnavailableError, SpawnError, SyncError } from "../../core/errors.js";
import {
  callMarks,
  CALL_MARK,
  isMarkValue,
  markAssignments,
  newMarkValue,
  SESSION_MARK,
  SESSION_MARK_FILE,
  type CallMarks,
} from "../../core/call-marks.js";
import { shellQuote } from "../../core/script.js";
import { originKey } from "../../core/login-snapshots.js";
import { MAX_INLINE_SCRIPT_BYTES } from "../../core/transport.js";
import type { FastPath, ProcessHandle, RunOptions, Transport, TreeKill } from "../../core/transport.js";
import type { FastPathRunner } from "../shared/fast-path/fast-path-runner.js";
import { SshFastPath } from "./fast-path.js";
import type { ExecOptions, ExecResult } from "./exec.js";
import { FileSync } from "../../sync/file-sync.js";
import type { NormalizedSyncConfig } from "../../sync/options.js";
import { SshCall, type CallEnd } from "./call.js";
import { controlArgs, describeTarget, killScript, sshArgs, wrapScript, type SshTarget } from "./command.js";
import { RsyncTransfer } from "./sync.js";
import { parseSweep, sweepScript } from "../../core/sweep-script.js";
import type { OwnerWatchdog } from "../shared/owner-watchdog.js";
import { guardSshOwnerDeath } from "./watchdog.js";
import { killGroupsFileLine, LIVE_GROUPS_LINE } from "./remote-record.js";

/** Where and how to connect (the control socket is made per session), plus what the session needs on the host. */
export interface SshTransportOptions extends Omit<SshTarget, "controlPath" | "sshOptions"> {
  sshOptions: string[];
  /** Variables for the session's first shell, sent in a private file, never on a command line. */
  env: Record<string, string>;
  /** Directory on the host for the session's files; default: a new private one under the host's temp dir. */
  remoteTempDir?: string | undefined;
  sync?: NormalizedSyncConfig | undefined;
  sshPath: string;
  rsyncPath: string;
  warn: (message: string) => void;
  /** Leave the remote processes and directory alone when this process dies without close() (CLI named sessions). */
  outliveOwner?: boolean | undefined;
  /** Run calls through the fast-path helper on the host when it can run there (docs/fast-path.md); default true. */
  fastPath?: boolean | undefined;
  /** The helper to copy to the host; default: the static one built into this package (tests point it elsewhere). */
  fastPathHelper?: string | undefined;
  /** Start from this process's capture of the same origin's login (core/login-snapshots.ts); default true. */
  reuseLoginSnapshot?: boolean | undefined;
}

/** Control calls (connect, kill, cleanup) that take longer than this are given up. */
const CONTROL_TIMEOUT_MS = 30_000;
/** How long a kill waits for a call that just started to report its remote group. */
const GROUP_WAIT_MS = 2000;
/** Groups remembered for cleanup at close; the oldest are forgotten past this. */
const MAX_GROUPS = 10_000;

export class SshTransport implements Transport {
  readonly name = "ssh";
  readonly actsOnHost = true;
  readonly stdinMode = "pipe";
  readonly needsRemotePid = true;
  readonly #options: SshTransportOptions;
  #target!: SshTarget;
  readonly #forwards = new PortForwards((args) => this.#spawnCollect(args, undefined, CONTROL_TIMEOUT_MS));
  #controlDir = "";
  #tempDir = "";
  #ownsTempDir = false;
  #envFile: string | undefined;
  #sync: FileSync | undefined;
  /**
   * Remote process groups, killed at close: those of calls whose outer shell
   * still runs, and those of finished calls, which may have left background
   * children behind.
   */
  readonly #activeGroups = new Set<number>();
  /** Finished groups, each with the session it lives in (the group itself for a plain call; the helper's for a fast-path job). */
  readonly #finishedGroups = new Map<number, number>();
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
    this.#target = {
      host: o.host,
      user: o.user,
      port: o.port,
      keyPath: o.keyPath,
      knownHostsFile: o.knownHostsFile,
      strictHostKeyChecking: o.strictHostKeyChecking,
      connectTimeoutMs: o.connectTimeoutMs,
      sshOptions: o.sshOptions,
      controlPath: join(this.#controlDir, "master"),
      controlPersistSeconds: o.controlPersistSeconds,
    };

    // One round trip: open the master, check bash, make the session's private
    // directory on the host and write the env file into it from stdin.
    const hasEnv = Object.keys(o.env).length > 0;
    const dir =
      o.remoteTempDir === undefined
        ? 'd=$(mktemp -d "${TMPDIR:-/tmp}/shellwright-XXXXXXXX")'
        : `d=${shellQuote(o.remoteTempDir)} && mkdir -p -m 700 -- "$d"`;
    // A session that outlives this process shares one session mark with every process that opens it, kept on
    // the host (call-marks.ts): the first writes its own (noclobber), each prints the kept one before the dir.
    const mark = o.outliveOwner
      ? `(set -C; printf '%s\\n' ${shellQuote(this.#sessionMark)} > "$d/${SESSION_MARK_FILE}") 2>/dev/null; head -n 1 "$d/${SESSION_MARK_FILE}"`
      : "";
    const script = [
      "command -v bash >/dev/null 2>&1 || { echo 'bash is not installed on the host' >&2; exit 127; }",
      `umask 077 && ${dir} || exit 1`,
      hasEnv ? 'cat > "$d/env" || exit 1' : "",
      mark,
      "printf '%s\\n' \"$d\"",
    ]
      .filter(Boolean)
      .join("\n");
    const envText = Object.entries(o.env)
      .map(([name, value]) => `export ${name}=${shellQuote(value)}\n`)
      .join("");
    let result: ExecResult;
    try {
      result = await this.#exec(script, { stdin: hasEnv ? envText : undefined });
    } catch (error) {
      await this.#closeMaster();
      throw error;
    }
    if (result.code !== 0) {
      await this.#closeMaster();
      throw new BackendUnavailableError(this.#connectFailure(result), { backend: this.name });
    }
    const lines = result.stdout.trim().split("\n");
    this.#tempDir = lines.pop() ?? "";
    if (o.outliveOwner) {
      // The line before the dir (a profile may print lines of its own before both).
      const kept = lines.at(-1)?.trim() ?? "";
      if (isMarkValue(kept)) this.#sessionMark = kept;
    }
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
    if (hasEnv) this.#envFile = `${this.#tempDir}/env`;
    if (o.sync !== undefined) {
      const transfer = new RsyncTransfer({
        rsyncPath: o.rsyncPath,
        sshPath: o.sshPath,
        target: this.#target,
        run: async (command) => {
          const r = await this.#exec(command);
          if (r.code !== 0)
            throw new Error(
              `\`${command.slice(0, 200)}\` failed on ${this.#where} (exit ${r.code}): ${(r.stderr || r.stdout).trim().slice(0, 500)}`,
            );
        },
      });
      this.#sync = new FileSync(transfer, { ...o.sync, backend: this.name });
    }
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
      onGroup: (group) => {
        this.#activeGroups.add(group);
        this.#watchdog?.addGroup(`a${group}`);
      },
      onGroupDone: (group, session) => this.#finished(group, session),
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
        if (r.code !== 0) throw this.#lost(r.stderr, "while sending a long command");
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
      onGroup: (group) => {
        this.#activeGroups.add(group);
        this.#watchdog?.addGroup(`a${group}`);
      },
      onOuterExit: (group) => this.#finished(group),
      settle: (end) => this.#settle(end),
    });
    this.#marks.set(call, marks);
    return call;
  }

  async killTree(handle: ProcessHandle, { signal, remotePid, graceMs }: TreeKill): Promise<boolean> {
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
    const r = await this.#exec(killScript({ group, pid: remotePid, mark }, signal, graceMs), {
      timeoutMs: CONTROL_TIMEOUT_MS + graceMs,
    });
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
    // Background children of the session end with it, as on the local backend.
    // A finished call's group is killed only while its leader (the outer
    // shell, dead by now) has not been replaced: PIDs wrap quickly (often at
    // 32768), and a reused one may lead an unrelated session. Entries are
    // GROUP:SESSION (a fast-path job's group lives in its helper's session),
    // or GROUP alone for a group that leads its own session (a plain call's).
    const pairs = [...this.#finishedGroups].map(([group, session]) => `${group}:${session}`);
    const cleanup = [
      LIVE_GROUPS_LINE,
      `for e in ${pairs.join(" ")}; do g=\${e%%:*}; [ -e /proc/$g ] && continue; case "$live" in *" $e "*) kill -s KILL -- -$g 2>/dev/null;; esac; done`,
      ...[...this.#activeGroups].map((group) => `kill -s KILL -- -${group} 2>/dev/null`),
      // Groups of earlier processes on this session (a named session's earlier execs), under the same rule.
      killGroupsFileLine(this.#groupsFile),
    ];
    // Everything the session started, however it detached from its call's group.
    cleanup.push(`bash -c ${shellQuote(sweepScript({ marks: [`${SESSION_MARK}=${this.#sessionMark}`] }, "KILL", 0))}`);
    if (this.#ownsTempDir && this.#tempDir !== "") cleanup.push(`rm -rf -- ${shellQuote(this.#tempDir)}`);
    await this.#exec([...cleanup, "true"].join("\n"), { timeoutMs: 10_000 }).catch(() => undefined);
    this.#activeGroups.clear();
    this.#finishedGroups.clear();
    await this.#closeMaster();
    this.#forwards.forget();
    this.#watchdog?.release();
    this.#watchdog = undefined;
  }

  /** A local forward on the session's master (port-forward.ts); stop() ends it with the master. */
  portUrl(port: number): Promise<PortUrl> {
    return this.#forwards.url(this.#target, port);
  }

  /** The owner watchdog's pid, while the session is open. */
  get watchdogPid(): number | undefined {
    return this.#watchdog?.pid;
  }

  /** `session`: the session the group lives in, when it does not lead its own (a fast-path job's). */
  #finished(group: number, session = group): void {
    this.#activeGroups.delete(group);
    this.#finishedGroups.set(group, session);
    this.#watchdog?.forgetGroup(`a${group}`);
    this.#watchdog?.addGroup(`f${group}`);
    if (this.#finishedGroups.size > MAX_GROUPS) {
      const oldest = this.#finishedGroups.keys().next().value!;
      this.#finishedGroups.delete(oldest);
      this.#watchdog?.forgetGroup(`f${oldest}`);
    }
  }

  async #closeMaster(): Promise<void> {
    await this.#spawnCollect(controlArgs(this.#target, "exit"), undefined, 5000).catch(() => undefined);
    await rm(this.#controlDir, { recursive: true, force: true });
    this.#controlDir = "";
  }

  /** A call ended without the outer shell's exit line: stopped on purpose, the remote shell died, or the connection did. */
  async #settle(end: CallEnd): Promise<number> {
    if (end.killed || end.clientCode !== 255) return end.clientCode;
    const master = await this.#spawnCollect(controlArgs(this.#target, "check"), undefined, 5000).catch(() => undefined);
    if (
      master?.code === 0 &&
      !/closed by remote host|Connection (?:reset|refused|closed|timed out)|Broken pipe|mux_client/i.test(end.stderr)
    ) {
      return 255; // the remote shell itself was killed (e.g. `kill -9 0`); the connection is fine
    }
    if (!end.started) throw this.#unreachable(end.stderr);
    throw this.#lost(end.stderr, "during the command");
  }

  #unreachable(stderr: string): BackendUnavailableError {
    const detail = stderr.trim() ? `: ${stderr.trim().split("\n").slice(-3).join(" / ")}` : "";
    return new BackendUnavailableError(
      `Cannot reach ${this.#where} over SSH${detail}. The command did not run; the next command tries to connect again.`,
      { backend: this.name },
    );
  }

  #lost(stderr: string, when: string): BackendUnavailableError {
    const detail = stderr.trim() ? `: ${stderr.trim().split("\n").slice(-3).join(" / ")}` : "";
    return new BackendUnavailableError(
      `The SSH connection to ${this.#where} was lost ${when}${detail}. The command's result is unknown; the next command reconnects.`,
      { backend: this.name },
    );
  }

  #connectFailure(result: ExecResult): string {
    const stderr = result.stderr.trim();
    if (result.code === 127 && stderr.includes("bash is not installed"))
      return `SSH to ${this.#where} works, but bash is not installed on the host; install bash there.`;
    let hint = "check host, port and network";
    if (/Permission denied|publickey/i.test(stderr))
      hint = "the host refused the key: check user and keyPath (BatchMode is on, so ssh never asks for a password)";
    else if (/Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/i.test(stderr))
      hint = "the host key is unknown or changed: check knownHostsFile or strictHostKeyChecking";
    else if (/Could not resolve hostname/i.test(stderr)) hint = "the host name does not resolve";
    return `SSH connection to ${this.#where} failed (exit ${result.code}): ${stderr || "no message from ssh"} (${hint})`;
  }

  /** Runs a short remote command over the master and collects its output. */
  #exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    return this.#spawnCollect(sshArgs(this.#target, command), options.stdin, options.timeoutMs ?? CONTROL_TIMEOUT_MS);
  }

  #spawnCollect(args: string[], stdin: string | Buffer | undefined, timeoutMs: number): Promise<ExecResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.#options.sshPath, args, {
        stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout!.setEncoding("utf8").on("data", (text: string) => (stdout += text));
      child.stderr!.setEncoding("utf8").on("data", (text: string) => (stderr += text));
      if (stdin !== undefined) {
        child.stdin!.on("error", () => undefined);
        child.stdin!.end(stdin);
      }
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        stderr += `\n(gave up after ${timeoutMs} ms)`;
      }, timeoutMs);
      child.once("error", (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        const hint =
          error.code === "ENOENT" ? " (install the OpenSSH client, e.g. apt-get install openssh-client)" : "";
        reject(
          new SpawnError(`Could not run ${this.#options.sshPath}: ${error.message}${hint}`, {
            cause: error,
            backend: this.name,
          }),
        );
      });
      child.once("close", (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? 255, stdout, stderr });
      });
    });
  }
}
