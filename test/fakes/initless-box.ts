/**
 * For the fake sandboxes: a box whose init never reaps, as a container or
 * sandbox started without one can be. It is a PID namespace (with its own
 * /proc) whose PID 1 is `sleep`: a process of the box that outlives its
 * parent is adopted by that init, and once it exits it stays a zombie for
 * good. On this machine PID 1 reaps orphans (now and then), which would hide
 * such a leak; in here it cannot hide. Linux with CAP_SYS_ADMIN (root) only.
 */

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";

export class InitlessBox {
  readonly #holder: ChildProcess;
  /** The box's init, by its pid on this machine. */
  readonly initPid: number;

  private constructor(holder: ChildProcess, initPid: number) {
    this.#holder = holder;
    this.initPid = initPid;
  }

  /** Why a box cannot be made here, or undefined when it can. */
  static unavailable(): string | undefined {
    const probe = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"], { encoding: "utf8" });
    return probe.status === 0 ? undefined : `unshare --pid --mount-proc fails here: ${probe.stderr.trim()}`;
  }

  static async start(): Promise<InitlessBox> {
    // --kill-child: when the holder goes, the init goes, and the kernel ends everything in the box with it.
    const holder = spawn("unshare", ["--pid", "--fork", "--mount-proc", "--kill-child", "sleep", "2147483647"], {
      stdio: "ignore",
    });
    const giveUpAt = Date.now() + 10_000;
    for (;;) {
      const children = readChildren(holder.pid!);
      if (children.length > 0) return new InitlessBox(holder, children[0]!);
      if (Date.now() > giveUpAt || holder.exitCode !== null) throw new Error("the box's init did not start");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** `argv` run inside the box (its pid namespace and its /proc). */
  argv(argv: readonly string[]): string[] {
    return ["nsenter", "-t", String(this.initPid), "-p", "-m", "--", ...argv];
  }

  /** The box's zombies (pid and name, as this machine sees them): exited processes nobody reaped. */
  zombies(): string[] {
    return readChildren(this.initPid).flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const match = /^\d+ \((.*)\) (\S)/.exec(stat);
        return match !== null && match[2] === "Z" ? [`${pid} ${match[1]}`] : [];
      } catch {
        return [];
      }
    });
  }

  stop(): void {
    this.#holder.kill("SIGKILL");
  }
}

function readChildren(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
