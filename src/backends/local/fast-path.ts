/**
 * The local backend's fast path (docs/fast-path.md): the helper runs as a
 * child of this process, on its stdin and stdout, in the session's cgroup,
 * with the session's mark in its environment (so the close sweep and the
 * owner watchdog find it, its launcher and every job).
 *
 * `helperCommand` is the one place that builds the helper's argv and
 * environment: a sandbox wraps it there, once per session. `localFastPath`
 * gives the shared runner this machine as its channel: the helper as a
 * child, the sweep and group kills here, and the session's group bookkeeping.
 */

import { spawn } from "node:child_process";
import type { KillSignal } from "../../core/transport.js";
import { FastPathRunner } from "../shared/fast-path/fast-path-runner.js";
import type { FastCall, HelperStream } from "../shared/fast-path/helper-client.js";
import { localHelperPath } from "../shared/fast-path/helper-path.js";
import { warnUnavailable } from "../shared/fast-path/unavailable.js";
import type { OwnerWatchdog } from "../shared/owner-watchdog.js";
import { WATCHDOG_AFTER_MS } from "./owner-cleanup.js";
import { killGroup } from "./process-groups.js";
import { runSweep, type SweepLaunch } from "./process-sweep.js";
import type { LocalSandbox } from "./sandbox/sandbox.js";
import { helperArgs, helperEnv, type HelperProgram } from "../shared/fast-path/helper-argv.js";
import { keepStderrTail } from "../shared/fast-path/helper-stderr.js";

export interface HelperCommand {
  argv: string[];
  env: Record<string, string>;
}

export interface HelperCommandOptions extends HelperProgram {
  /** The session cgroup: the helper joins it before it forks its launcher. */
  cgroupPath?: string | undefined;
}

export function helperCommand(options: HelperCommandOptions): HelperCommand {
  const helper = [
    options.helper,
    ...helperArgs({ snapshot: options.snapshot, workDir: options.workDir, bash: options.bash }),
  ];
  // Joining from Node after the spawn races the helper's first fork (its
  // launcher, which every job comes from): a shell joins first and execs it.
  return { argv: joinCgroupFirst(options.bash, options.cgroupPath, helper), env: helperEnv(options.sessionMark) };
}

/** helperCommand, inside the session's sandbox when it has one: the helper, its launcher and every job it forks. */
export function sessionHelperCommand(
  options: HelperCommandOptions & { sandbox?: LocalSandbox | undefined },
): HelperCommand {
  const { sandbox, cgroupPath, ...program } = options;
  if (sandbox === undefined) return helperCommand({ ...program, cgroupPath });
  // The cgroup is joined before entering the sandbox: inside, /sys is read-only.
  const command = helperCommand(program);
  const launch = sandbox.wrap(command.argv, command.env);
  return { argv: joinCgroupFirst(options.bash, cgroupPath, launch.argv), env: launch.env as Record<string, string> };
}

/** What the local transport gives its fast path. */
export interface LocalFastPathHost {
  /** The helper program; default: the one built into this package. */
  helper: string | undefined;
  bash: string;
  sessionMark: string;
  /** The session's state dir: the helper's work dir. */
  workDir: string;
  cgroupPath: string | undefined;
  sandbox: LocalSandbox | undefined;
  /** The helper's process group, as it is spawned: into the session's cgroup and groups. */
  onHelper(pid: number): void;
  /** A job's group as it starts: recorded where an owner killed mid-call leaves it for `close` and `--prune`. */
  onJob(pid: number): void;
  /** The owner watchdog, when the session has one. */
  watchdog(): OwnerWatchdog | undefined;
  /** The watchdog (and the groups file) hear of a job's group; `ended`: its call ended with a process left in it. */
  guard(pid: number, ended?: boolean): void;
}

/** Undefined when no helper was built for this machine: every call takes the plain path. */
export function localFastPath(host: LocalFastPathHost): FastPathRunner | undefined {
  const helper = host.helper ?? localHelperPath();
  if (helper === undefined) {
    warnUnavailable(`no helper was built for linux-${process.arch} (npm run build needs a C compiler)`);
    return undefined;
  }
  const inside = sandboxLaunch(host.sandbox);
  return new FastPathRunner({
    sessionMark: host.sessionMark,
    queueWhileStarting: true,
    start: (snapshot) => {
      const { bash, sessionMark, workDir, cgroupPath, sandbox } = host;
      const command = sessionHelperCommand({ helper, bash, snapshot, workDir, sessionMark, cgroupPath, sandbox });
      return spawnHelper(command, (pid) => host.onHelper(pid));
    },
    killGroup: (pid) => {
      if (inside === undefined) killGroup(pid, "KILL");
      else void runSweep(host.bash, { marks: [], groups: [pid] }, "KILL", 0, inside);
    },
    // The build runs in place (inside the sandbox too, where the helper itself runs): no copy.
    helperPath: () => Promise.resolve(helper),
    // A sandboxed job's group dies with the sandbox (close, or bwrap --die-with-parent): nothing to track out here.
    ...(inside === undefined ? { adopt: (call: FastCall) => adoptJob(host, call) } : {}),
    // After the helper's signal: the job's group from here too, then the sweep of the call's mark and tree.
    sweep: (target, signal: KillSignal, graceMs) => {
      if (inside === undefined) for (const group of target.groups ?? []) killGroup(group, signal);
      return runSweep(host.bash, target, signal, graceMs, inside);
    },
  });
}

/**
 * In a sandbox the helper reports its jobs' PIDs as its pid namespace numbers
 * them, and out here those name other processes (a kernel thread, another
 * user's job): their groups are killed and the sweep runs in there.
 */
function sandboxLaunch(sandbox: LocalSandbox | undefined): SweepLaunch | undefined {
  return sandbox === undefined ? undefined : (argv, env) => sandbox.wrap(argv, env);
}

/**
 * A job's group goes to the groups file at once: an owner killed mid-call (a
 * CLI exec) must leave it where `close`/`--prune` find it. The watchdog only
 * hears of a job that runs a while or leaves its group behind: two pipe
 * writes and a wakeup of its bash per call, for the few milliseconds in
 * which the job itself still carries the session's mark for its sweep.
 */
function adoptJob(host: LocalFastPathHost, call: FastCall): FastCall {
  let told = false;
  let timer: NodeJS.Timeout | undefined;
  call.onStart = (pid) => {
    host.onJob(pid);
    if (host.watchdog() === undefined) return;
    timer = setTimeout(() => {
      told = true;
      host.guard(pid);
    }, WATCHDOG_AFTER_MS);
    timer.unref();
  };
  // A job group that outlives its call (a background child) is the session's to end at close;
  // an empty one is forgotten (its id may be reused by anyone).
  void call.end.then((end) => {
    clearTimeout(timer);
    const pid = call.pid;
    if (pid === undefined) return;
    if (told) host.watchdog()?.forgetGroup(pid);
    if (end.groupLeft) host.guard(pid, true);
  });
  return call;
}

/** `argv` run by a shell that first joins the cgroup (when there is one), so that nothing it forks is left out. */
export function joinCgroupFirst(bash: string, cgroupPath: string | undefined, argv: string[]): string[] {
  if (cgroupPath === undefined) return argv;
  return [bash, "-c", 'builtin echo $$ > "$1/cgroup.procs" 2>/dev/null; shift; exec "$@"', "bash", cgroupPath, ...argv];
}

/** Spawns the helper; onPid lets the transport put it into the session's cgroup and groups. */
export function spawnHelper(command: HelperCommand, onPid: (pid: number) => void): HelperStream {
  const [file, ...args] = command.argv;
  const child = spawn(file!, args, { detached: true, stdio: ["pipe", "pipe", "pipe"], env: command.env });
  const stderr = keepStderrTail(child.stderr);
  const closed = new Promise<void>((resolve) => {
    child.once("error", () => resolve());
    child.once("close", () => resolve());
  });
  if (child.pid !== undefined) onPid(child.pid);
  const stdout = child.stdout as unknown as { ref(): void; unref(): void };
  const stdin = child.stdin as unknown as { ref?(): void; unref?(): void };
  const hold = (busy: boolean): void => {
    if (busy) {
      child.ref();
      stdout.ref();
      stdin.ref?.();
    } else {
      child.unref();
      stdout.unref();
      stdin.unref?.();
    }
  };
  // An idle helper never keeps this process alive (a session left open does not hold the event loop).
  hold(false);
  return {
    hold,
    stderrTail: stderr,
    resume: () => {
      try {
        if (child.pid !== undefined) process.kill(child.pid, "SIGCONT");
      } catch {
        // already gone
      }
    },
    input: child.stdin,
    output: child.stdout,
    closed,
    kill: () => {
      // The group: in a sandbox the helper is nsenter's child, not this one's.
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}
