/**
 * What sessions of dead owners left behind, on every backend, for
 * `shellwright sessions` to list and `--prune` to remove. A live session's
 * owner watchdog normally cleans up after a crash; these are what remains
 * when it could not (it was killed too, the machine rebooted with the files
 * on disk, a docker engine that did not answer), and the first command of a
 * new named session killed before it saved the session.
 *
 * Only things that name their owner are touched: a directory with an `owner`
 * file whose `host/pid` is gone, a labelled docker container whose owner is
 * gone. Directories from before owners were recorded are left alone.
 */

import { spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  listDockerContainers,
  reapDockerContainers,
  removeDockerContainers,
  type DockerContainerInfo,
} from "../backends/docker/containers.js";
import { killRecordedGroups } from "../backends/local/groups-file.js";
import { ownerAliveHere, readOwner } from "../backends/shared/owner.js";
import type { SessionStore } from "./session-store.js";

export interface Leftover {
  kind: "state-dir" | "ssh-control" | "unfinished-session" | "docker-container";
  /** A path, a session name or a container name. */
  what: string;
  /** `host/pid` of the process that made it. */
  owner: string;
}

/** Everything a dead owner left: nothing here belongs to a live process. */
export async function findLeftovers(store: SessionStore): Promise<Leftover[]> {
  const found: Leftover[] = [];
  for (const dir of ownedDirs(/^shellwright-(?!ssh-)/))
    found.push({ kind: "state-dir", what: dir.path, owner: dir.owner });
  for (const dir of ownedDirs(/^shellwright-ssh-/))
    found.push({ kind: "ssh-control", what: dir.path, owner: dir.owner });
  for (const s of store.unfinished())
    if (!s.ownerAlive) found.push({ kind: "unfinished-session", what: s.name, owner: s.owner ?? "unknown" });
  for (const c of await deadContainers()) found.push({ kind: "docker-container", what: c.name, owner: c.owner });
  return found;
}

/** Removes what findLeftovers found; returns what was removed. */
export async function pruneLeftovers(store: SessionStore, leftovers: Leftover[]): Promise<Leftover[]> {
  const removed: Leftover[] = [];
  for (const item of leftovers) {
    if (item.kind === "state-dir") {
      rmSync(item.what, { recursive: true, force: true });
    } else if (item.kind === "ssh-control") {
      // A master left running by a dead owner: ask it to exit, then drop its socket's directory.
      spawnSync("ssh", ["-o", `ControlPath=${join(item.what, "master")}`, "-O", "exit", "shellwright-leftover"], {
        stdio: "ignore",
        timeout: 10_000,
      });
      rmSync(item.what, { recursive: true, force: true });
    } else if (item.kind === "unfinished-session") {
      const dir = join(store.root, item.what);
      killRecordedGroups(dir);
      // The container a docker named session's first command made.
      await removeDockerContainers([`shellwright-${item.what}`], { timeoutMs: 10_000 }).catch(() => []);
      store.remove(item.what);
    } else {
      continue; // containers go together below
    }
    removed.push(item);
  }
  if (leftovers.some((l) => l.kind === "docker-container")) {
    const reaped = await reapDockerContainers({ timeoutMs: 30_000 }).catch(() => [] as DockerContainerInfo[]);
    for (const c of reaped) removed.push({ kind: "docker-container", what: c.name, owner: c.owner });
  }
  return removed;
}

/** Where local state dirs and ssh control dirs are made (local/transport.ts, ssh/transport.ts). */
function roots(): string[] {
  const dirs = [process.env.XDG_RUNTIME_DIR, "/dev/shm", tmpdir()].filter((d): d is string => !!d);
  return [...new Set(dirs)];
}

function ownedDirs(pattern: RegExp): { path: string; owner: string }[] {
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
      const owner = readOwner(path);
      if (owner !== undefined && !ownerAliveHere(owner)) found.push({ path, owner });
    }
  }
  return found;
}

/** Labelled containers reapDockerContainers would remove; none when no engine answers. */
async function deadContainers(): Promise<DockerContainerInfo[]> {
  try {
    const all = await listDockerContainers({ timeoutMs: 5000 });
    return all.filter((c) => !c.keep && (c.state !== "running" || !ownerAliveHere(c.owner)));
  } catch {
    return [];
  }
}
