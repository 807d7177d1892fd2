/**
 * One ssh session's fast path (docs/fast-path.md, "SSH"): copies the
 * helper to the host once, then keeps it running on one channel over the
 * master through the shared runner, and kills its calls the way the plain
 * path kills its own (the sweep over the master). The transport gives it
 * the master (`exec`), its group bookkeeping and its lost-connection check.
 */

import { DEFAULT_GRACE_MS } from "../shared/remote-tree.js";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { FastPath, KillSignal } from "../../core/transport.js";
import { FastPathRunner } from "../shared/fast-path/fast-path-runner.js";
import type { FastCall } from "../shared/fast-path/helper-client.js";
import { staticHelper, staticHelperFor } from "../shared/fast-path/helper-path.js";
import { NO_STATIC_HELPER, warnUnavailable } from "../shared/fast-path/unavailable.js";
import { parseSweep, sweepScript } from "../../core/sweep-script.js";
import type { CallEnd } from "./call.js";
import {
  helperRemoteCommand,
  installScript,
  installWorked,
  parseProbe,
  probeScript,
  recordJobGroupLine,
  spawnSshHelper,
  type ChannelEnd,
} from "./fast-path-commands.js";
import type { ExecOptions, ExecResult } from "./exec.js";

export interface SshFastPathHost {
  /** The helper to copy; default: the static one built into this package. */
  helperFile?: string | undefined;
  tempDir: string;
  sessionMark: string;
  /** A named session's groups file on the host. */
  groupsFile?: string | undefined;
  sshPath: string;
  /** The ssh argv that runs a remote command over the master. */
  helperArgs(command: string): string[];
  /** A short command over the master. */
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  /** The plain path's verdict on a channel that ended: throws when the connection was lost. */
  settle(end: CallEnd): Promise<number>;
  /** A remote process group the session must end at close (the helper's, a running job's). */
  onGroup(group: number): void;
  /** That group's leader is gone (its members, if any, are still ended at close); a job's group lives in the helper's session. */
  onGroupDone(group: number, session?: number): void;
}

/** Kill commands over the master that take longer than this (plus the grace) are given up. */
const KILL_TIMEOUT_MS = 30_000;

export class SshFastPath {
  readonly #host: SshFastPathHost;
  #runner: FastPathRunner | undefined;
  #fastPath: FastPath | undefined;
  #stopped = false;
  /** The snapshot the session asked for before the helper was on the host. */
  #wanted: string | undefined;
  /** The remote group of the running helper's channel (sshd's shell, exec'd into the helper). */
  #helperGroup: number | undefined;
  /** How the current helper's channel ends (a lost connection, or the helper's own death). */
  #channel: Promise<ChannelEnd> | undefined;

  private constructor(host: SshFastPathHost) {
    this.#host = host;
  }

  /**
   * Copies the helper in the background (the session opens without
   * waiting; calls take the plain path until it is there). Undefined when
   * there is no helper to copy.
   */
  static start(host: SshFastPathHost): SshFastPath | undefined {
    const local = staticHelper();
    const path = host.helperFile ?? local?.path;
    if (path === undefined || local === undefined) {
      warnUnavailable(NO_STATIC_HELPER);
      return undefined;
    }
    const first = remoteHelper(host, path);
    if (first === undefined) return undefined;
    const fast = new SshFastPath(host);
    fast.#fastPath = {
      prepare: (snapshot) => {
        fast.#wanted = snapshot;
        fast.#runner?.prepare(snapshot);
      },
      tryRun: (request) => {
        if (fast.#runner === undefined) {
          fast.#wanted = request.snapshot;
          return undefined;
        }
        return fast.#runner.tryRun(request);
      },
      get helperExits() {
        return fast.#runner?.helperExits ?? 0;
      },
      // A live line to a process one of the helper's calls started (Environment.attachProcess).
      attach: (request) => fast.#runner?.attach(request),
      // The copy the fast path made (the session's one copy), once it is there; undefined when it failed.
      helperPath: async () => {
        await installing;
        return fast.#runner?.helperPath();
      },
      // The runner exists only once the helper is on the host: wait for the copy first.
      whenReady: async () => {
        await installing;
        return (await fast.#runner?.whenReady()) === true;
      },
    };
    const installing = fast
      .#install(first, local.machine)
      .catch((error: unknown) => {
        if (!fast.#stopped)
          warnUnavailable(`on the ssh host, ${error instanceof Error ? error.message : String(error)}`);
        return undefined;
      })
      .then((installed) => {
        if (fast.#stopped) return;
        if (installed === undefined) {
          // It cannot run there: the plain path for the whole session.
          fast.#fastPath = undefined;
          return;
        }
        fast.#runner = fast.#newRunner(installed.remote, installed.bash);
        if (fast.#wanted !== undefined) fast.#runner.prepare(fast.#wanted);
      });
    return fast;
  }

  get fastPath(): FastPath | undefined {
    return this.#fastPath;
  }

  get runner(): FastPathRunner | undefined {
    return this.#runner;
  }

  get helperPid(): number | undefined {
    return this.#runner?.running === true ? this.#helperGroup : undefined;
  }

  /** Ends the helper (its channel, and with it its launcher); jobs are the close sweep's. */
  stop(): void {
    this.#stopped = true;
    this.#fastPath = undefined;
    this.#runner?.stop();
  }

  /**
   * The host's bash and the helper's path there, once it is there and runs;
   * undefined: no fast path. A host of another architecture than this
   * machine gets the helper built for it, when there is one.
   */
  async #install(helper: RemoteHelper, machine: string): Promise<{ bash: string; remote: string } | undefined> {
    let probe = parseProbe((await this.#host.exec(probeScript(helper.remote))).stdout);
    if (probe === undefined) throw new Error("the probe for uname -m and bash failed");
    if (probe.machine !== machine) {
      const other = this.#host.helperFile === undefined ? staticHelperFor(probe.machine) : undefined;
      const next = other === undefined ? undefined : remoteHelper(this.#host, other.path);
      if (next === undefined) throw new Error(`the host runs on ${probe.machine}, and no helper was built for it`);
      if (this.#stopped) return undefined;
      helper = next;
      probe = parseProbe((await this.#host.exec(probeScript(helper.remote))).stdout);
      if (probe === undefined) throw new Error("the probe for uname -m and bash failed");
    }
    // Closed meanwhile: a command now would open a new connection.
    if (this.#stopped) return undefined;
    if (
      !probe.present &&
      !installWorked((await this.#host.exec(installScript(helper.remote), { stdin: helper.bytes })).stdout)
    )
      throw new Error(`the helper copied to ${helper.remote} does not run there (a noexec mount?)`);
    return { bash: probe.bash, remote: helper.remote };
  }

  #newRunner(helper: string, bash: string): FastPathRunner {
    const host = this.#host;
    return new FastPathRunner({
      sessionMark: host.sessionMark,
      queueWhileStarting: true,
      helperPath: () => Promise.resolve(helper),
      // Recorded as the job starts, on the host: an owner killed mid-call leaves it for `close`.
      jobPrologue: host.groupsFile === undefined ? undefined : recordJobGroupLine(host.groupsFile),
      start: (snapshot) => {
        this.#helperGroup = undefined;
        const command = helperRemoteCommand({
          helper,
          bash,
          snapshot,
          workDir: host.tempDir,
          sessionMark: host.sessionMark,
          groupsFile: host.groupsFile,
        });
        let group: number | undefined;
        const stream = spawnSshHelper(host.sshPath, host.helperArgs(command), (pid) => {
          group = pid;
          this.#helperGroup = pid;
          host.onGroup(pid);
        });
        this.#channel = stream.ended;
        void stream.closed.then(() => {
          if (group !== undefined) host.onGroupDone(group);
        });
        // A command stopped the helper (`kill -STOP $PPID`): continued over the master.
        const resume = (): void => {
          if (group !== undefined) void host.exec(`kill -s CONT ${group} 2>/dev/null; true`).catch(() => undefined);
        };
        return Object.assign(stream, { resume });
      },
      // The helper died under a started job: its group is killed on the host, as a timeout would.
      killGroup: (pid) => {
        if (this.#stopped) return; // closing: the close sweep ends it
        void host.exec(`kill -s KILL -- -${pid} 2>/dev/null; true`).catch(() => undefined);
      },
      adopt: (call) => this.#adopt(call),
      // The host's sweep, over the master.
      sweep: async (target, signal, graceMs) => {
        const r = await host
          .exec(sweepScript(target, signal, graceMs), { timeoutMs: KILL_TIMEOUT_MS + graceMs })
          .catch(() => undefined);
        return r !== undefined && r.code === 0 ? parseSweep(r.stdout) : { clean: false, hit: [] };
      },
    });
  }

  /** A call's groups for close, and a wait that tells a lost connection from the helper's death. */
  #adopt(handle: FastCall): FastCall {
    const host = this.#host;
    const channel = this.#channel;
    // sshd's shell exec'd into the helper: its pid is the session every job of this helper lives in.
    const session = this.#helperGroup;
    // A call cut off by its helper's death reports 137; when the connection is what died, a call that started, or
    // may have (its request reached the helper's client), fails as a plain one does: BackendUnavailableError, its
    // result unknown, the next call reconnects (docs/ssh.md). One that provably never left this process (not
    // started, not uncertain) is run again on the plain path by the session.
    handle.wait = async () => {
      const end = await handle.end;
      const mayHaveRun = end.started || end.uncertain === true;
      if (!mayHaveRun || end.killed || end.committed || end.status !== 137 || channel === undefined) return end.status;
      const gone = await Promise.race([channel, Promise.resolve(undefined)]);
      if (gone !== undefined)
        await host.settle({
          reported: undefined,
          killed: false,
          clientCode: gone.code,
          stderr: gone.stderr,
          started: true,
        });
      return end.status;
    };
    handle.onStart = (pid) => host.onGroup(pid);
    // A finished job's group may keep background children: ended at close while its leader stays dead.
    void handle.end.then(() => {
      if (handle.pid !== undefined) host.onGroupDone(handle.pid, session);
    });
    return handle;
  }

  /** Undefined when the handle is not one of this session's fast-path calls. */
  kill(handle: object, signal: KillSignal, graceMs = DEFAULT_GRACE_MS): Promise<boolean> | undefined {
    return this.#runner?.kill(handle, signal, graceMs);
  }
}

/** A helper's bytes and the path they get on the host (named by their hash: a changed helper never reuses a copy). */
interface RemoteHelper {
  bytes: Buffer;
  remote: string;
}

function remoteHelper(host: SshFastPathHost, path: string): RemoteHelper | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return undefined;
  }
  return { bytes, remote: `${host.tempDir}/swmux-${createHash("sha256").update(bytes).digest("hex").slice(0, 16)}` };
}
