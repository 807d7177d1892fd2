/**
 * A cgroup v2 per local session, where the host lets us make one (root or a
 * delegated cgroup, on a writable cgroup2 mount): every call's wrapper is moved
 * into it right after the spawn, its descendants inherit it whatever they do
 * to their session, group or environment, and close() kills the lot with one
 * write to cgroup.kill. Only a process allowed to write cgroup.procs elsewhere
 * (root) can leave it.
 *
 * Anything that fails here (no cgroup2 mount, read-only in a container, no
 * permission, a kernel before 5.14 without cgroup.kill and no freezer) turns
 * the cgroup off silently: the mark sweep (sweep-script.ts) still runs.
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";

export class SessionCgroup {
  readonly path: string;

  private constructor(path: string) {
    this.path = path;
  }

  /** A new cgroup under this process's own, or undefined when the host does not allow it. */
  static create(): SessionCgroup | undefined {
    try {
      const base = ownCgroupDir();
      if (base === undefined) return undefined;
      removeStale(base);
      const path = `${base}/shellwright-${process.pid}-${randomBytes(6).toString("hex")}`;
      mkdirSync(path);
      const cgroup = new SessionCgroup(path);
      return cgroup;
    } catch {
      return undefined;
    }
  }

  /**
   * The cgroup a session of `owner` (a PID, now gone) made, as its state dir recorded it: only a directory named
   * as create() names one for that owner, inside a cgroup2 mount. Undefined for anything else.
   */
  static leftBy(owner: number, path: string): SessionCgroup | undefined {
    const name = /\/shellwright-(\d+)-[0-9a-f]+$/.exec(path)?.[1];
    if (name !== String(owner) || path.split("/").includes("..") || !path.startsWith("/")) return undefined;
    const mounts = cgroup2Mounts();
    if (!mounts.some((mount) => path.startsWith(`${mount}/`)) || !existsSync(`${path}/cgroup.procs`)) return undefined;
    return new SessionCgroup(path);
  }

  /** Moves a just-spawned process in; false when that failed (the marks still cover it). */
  adopt(pid: number): boolean {
    try {
      writeFileSync(`${this.path}/cgroup.procs`, String(pid));
      return true;
    } catch {
      return false;
    }
  }

  /** Kills every process in the cgroup and waits (briefly) until it is empty. */
  async killAll(): Promise<void> {
    try {
      writeFileSync(`${this.path}/cgroup.kill`, "1");
    } catch {
      this.#killOneByOne();
    }
    for (let i = 0; i < 200 && this.populated(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  populated(): boolean {
    try {
      return /^populated 1$/m.test(readFileSync(`${this.path}/cgroup.events`, "utf8"));
    } catch {
      return false;
    }
  }

  remove(): void {
    try {
      rmdirSync(this.path);
    } catch {
      // still populated or already gone: nothing more to do
    }
  }

  /** Kernels before 5.14: freeze, KILL each member, thaw (a frozen process cannot fork away). */
  #killOneByOne(): void {
    try {
      writeFileSync(`${this.path}/cgroup.freeze`, "1");
    } catch {
      // no freezer either: plain KILL rounds
    }
    for (let round = 0; round < 5; round++) {
      let pids: number[] = [];
      try {
        pids = readFileSync(`${this.path}/cgroup.procs`, "utf8").split("\n").filter(Boolean).map(Number);
      } catch {
        break;
      }
      if (pids.length === 0) break;
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
    try {
      writeFileSync(`${this.path}/cgroup.freeze`, "0");
    } catch {
      // never frozen
    }
  }
}

/**
 * Empty cgroups left by owners that died without closing their sessions (a
 * killed program, a CLI run of a named session): rmdir takes only empty ones,
 * and only those whose owner (the PID in the name) is gone are tried.
 */
function removeStale(base: string): void {
  for (const name of readdirSync(base)) {
    const owner = /^shellwright-(\d+)-[0-9a-f]+$/.exec(name)?.[1];
    if (owner === undefined || ownerAlive(Number(owner))) continue;
    try {
      rmdirSync(`${base}/${name}`);
    } catch {
      // still populated: its processes outlived their owner
    }
  }
}

function ownerAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The writable cgroup2 mounts of this process, as `{root, mountPoint}`. */
function cgroup2MountInfo(): { root: string; mountPoint: string }[] {
  const found: { root: string; mountPoint: string }[] = [];
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    // Fields: id parent dev root mountpoint options ... - fstype source superoptions
    const [left, right] = line.split(" - ");
    if (right?.split(" ")[0] !== "cgroup2") continue;
    const fields = left!.split(" ");
    if (fields[5]?.split(",").includes("ro")) continue;
    found.push({ root: fields[3]!, mountPoint: fields[4]!.replaceAll("\\040", " ") });
  }
  return found;
}

function cgroup2Mounts(): string[] {
  try {
    return cgroup2MountInfo().map((m) => m.mountPoint);
  } catch {
    return [];
  }
}

/** This process's cgroup v2 directory: the cgroup2 mount plus the path in /proc/self/cgroup. */
function ownCgroupDir(): string | undefined {
  const own = /^0::(.*)$/m.exec(readFileSync("/proc/self/cgroup", "utf8"))?.[1];
  if (own === undefined) return undefined;
  for (const { root, mountPoint } of cgroup2MountInfo()) {
    // A namespaced mount shows only the part of the tree below its root.
    if (!own.startsWith(root)) continue;
    const rest = own.slice(root === "/" ? 0 : root.length);
    return `${mountPoint}${rest === "/" ? "" : rest}`;
  }
  return undefined;
}
