/** Finding processes by command line and ending them by pid, for tests that prove something is gone. */

import { readdirSync, readFileSync } from "node:fs";
import { alive } from "./processes.js";

/** Pids of live processes whose command line contains every one of `parts`. */
export function pidsWithCmdline(...parts: string[]): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ");
    } catch {
      continue;
    }
    if (parts.every((p) => cmdline.includes(p)) && alive(Number(name))) found.push(Number(name));
  }
  return found;
}

/** Ends the given processes if they still live (tests end only what they started). */
export function killAll(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** Pids of live processes whose argv is exactly `argv` (a command line that merely mentions it does not count). */
export function pidsWithArgv(...argv: string[]): number[] {
  const wanted = `${argv.join("\0")}\0`;
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8") === wanted && alive(Number(name))) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Pids of the children of `parent`, from /proc. */
export function childrenOf(parent: number): number[] {
  return childrenNamed(parent, "");
}

/** Pids of live children of `parent` whose name (comm) starts with `prefix`: e.g. the fast-path helpers a server started. */
export function childrenNamed(parent: number, prefix: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      const ppid = Number(stat.slice(close + 2).split(" ")[1]);
      if (ppid === parent && comm.startsWith(prefix) && alive(Number(name))) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
