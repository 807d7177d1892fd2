/**
 * What a backend's sessions of dead owners can leave on this machine, as
 * the backend itself finds and removes it (each backend's record declares
 * its own; `shellwright sessions` shows them). Only things
 * that name their owner are touched, and only when that owner is gone.
 */

import { lstatSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ownerAliveHere, readOwner } from "./owner.js";

export interface Leftover {
  /** "state-dir", "ssh-control", "docker-container", "unfinished-session". */
  kind: string;
  /** A path, a session name or a container name. */
  what: string;
  /** `host/pid` of the process that made it. */
  owner: string;
}

export interface LeftoverSource {
  /** Everything of this kind a dead owner left; never anything of a live process. */
  find(): Promise<Leftover[]>;
  /** Removes those of `found` that are this source's; returns what was removed. */
  remove(found: Leftover[]): Promise<Leftover[]>;
  /**
   * What an unfinished named session may have made with this backend (its container, its jobs), removed by
   * its name; `dir` is the session's own directory in the CLI's store.
   */
  removeUnfinished?(name: string, dir: string): Promise<void>;
}

/** Where local state dirs and ssh control dirs are made (local/transport.ts, ssh/transport.ts). */
function roots(): string[] {
  const dirs = [process.env.XDG_RUNTIME_DIR, "/dev/shm", tmpdir()].filter((d): d is string => !!d);
  return [...new Set(dirs)];
}

/**
 * A directory this user made and nobody else can write: what `--prune` acts on (it kills what the dir records).
 * The temp dir is shared, and another user's `shellwright-*` dir there must not steer what this user kills.
 */
function ours(path: string): boolean {
  try {
    const stat = lstatSync(path);
    return stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/** Directories of dead owners whose names match, in the roots where sessions make them. */
export function deadOwnersDirs(pattern: RegExp): { path: string; owner: string }[] {
  const found: { path: string; owner: string }[] = [];
  for (const root of roots()) {
    let names: string[];
    try {
      names = readdirSync(root);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!pattern.test(name)) continue;
      const path = join(root, name);
      if (!ours(path)) continue;
      const owner = readOwner(path);
      if (owner !== undefined && !ownerAliveHere(owner)) found.push({ path, owner });
    }
  }
  return found;
}
