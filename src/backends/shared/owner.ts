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

/** A `host/pid` owner is alive when it is on another host or its process still exists here. */
export function ownerAliveHere(owner: string): boolean {
  const slash = owner.lastIndexOf("/");
  const host = owner.slice(0, slash);
  const pid = Number(owner.slice(slash + 1));
  if (slash < 0 || host !== hostname() || !Number.isInteger(pid) || pid <= 0) return host !== hostname();
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
