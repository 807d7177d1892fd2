/**
 * The local backend's fast path (docs/fast-path.md): the helper runs as a
 * child of this process, on its stdin and stdout, in the session's cgroup,
 * with the session's mark in its environment (so the close sweep and the
 * owner watchdog find it, its launcher and every job).
 *
 * `helperCommand` is the one place that builds the helper's argv and
 * environment: a sandbox wraps it there, once per session.
 */

import { spawn } from "node:child_process";
import type { HelperStream } from "../shared/fast-path/helper-client.js";
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
