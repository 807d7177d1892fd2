/**
 * Who owns a session's leftovers: the `host/pid` of the process that opened
 * it, written next to what it leaves on disk and on docker labels, so that
 * `shellwright sessions --prune` can tell a dead owner's leftovers from a
 * live session's files.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

/** The file in a state or control directory that names its owner. */
export const OWNER_FILE = "owner";

/** This process, as `host/pid`. */
export function ownerMark(): string {
  return `${hostname()}/${process.pid}`;
}

/** Records this process as the directory's owner (0600). */
export function writeOwner(dir: string): void {
  writeFileSync(join(dir, OWNER_FILE), `${ownerMark()}\n`, { mode: 0o600 });
}

/** The directory's recorded owner, or undefined when none was written. */
export function readOwner(dir: string): string | undefined {
  try {
    const text = readFileSync(join(dir, OWNER_FILE), "utf8").trim();
    return text === "" ? undefined : text;
  } catch {
    return undefined;
  }
}

/** The PID of a `host/pid` owner on this host; undefined for another host's or a malformed one. */
export function ownerPid(owner: string): number | undefined {
  const slash = owner.lastIndexOf("/");
  const pid = Number(owner.slice(slash + 1));
  return slash >= 0 && owner.slice(0, slash) === hostname() && Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * A `host/pid` owner is alive when it is on another host or its process still exists here. A zombie is dead: it
 * runs nothing and its watchdog saw its pipe close, but its PID stays taken until its parent reaps it.
 */
export function ownerAliveHere(owner: string): boolean {
  const pid = ownerPid(owner);
  if (pid === undefined) return owner.slice(0, Math.max(0, owner.lastIndexOf("/"))) !== hostname();
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return true; // no /proc: the signal's answer stands
  }
}
