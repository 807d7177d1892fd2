/**
 * Shellwright's containers, found by their label: what `shellwright sessions`
 * lists and `shellwright close` removes. Only containers that carry the
 * label are ever touched, whatever name or id is passed.
 */

import { BackendUnavailableError } from "../../core/errors.js";
import { runDockerCli, type CliOptions } from "./cli.js";
import { ownerAliveHere } from "../shared/owner.js";
import { DOCKER_LABEL, KEEP_LABEL, OWNER_LABEL } from "./labels.js";

export interface DockerContainerInfo {
  id: string;
  name: string;
  image: string;
  /** The engine's state: running, exited, created, paused, dead, … */
  state: string;
  /** The engine's human status, e.g. "Up 5 minutes". */
  status: string;
  createdAt: string;
  /** Made with keepContainer: meant to outlive its session. */
  keep: boolean;
  /** `host/pid` of the process that created it. */
  owner: string;
  labels: Record<string, string>;
}

export interface ReapOptions extends CliOptions {
  /** Also remove kept containers (keepContainer) whose owner is gone. @default false */
  includeKept?: boolean;
  /** Decides whether an owner process is alive; owners on other hosts always count as alive. */
  ownerAlive?: (owner: string) => boolean;
}

/** Every container with the shellwright label, running or not. */
export async function listDockerContainers(options: CliOptions = {}): Promise<DockerContainerInfo[]> {
  const result = await runDockerCli(
    ["ps", "-a", "--no-trunc", "--filter", `label=${DOCKER_LABEL}=1`, "--format", "{{json .}}"],
    options,
  );
  if (result.code !== 0)
    throw new BackendUnavailableError(`docker ps failed (exit ${result.code}): ${result.stderr.trim()}`, {
      backend: "docker",
    });
  return result.stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => toInfo(JSON.parse(line) as Record<string, string>));
}

/**
 * Removes the given containers (names or ids, running or not), but only those
 * that carry the shellwright label. Returns the names removed; a name that is
 * not a shellwright container is left alone and not returned.
 */
export async function removeDockerContainers(namesOrIds: string[], options: CliOptions = {}): Promise<string[]> {
  if (namesOrIds.length === 0) return [];
  const ours = await listDockerContainers(options);
  const targets = ours.filter((c) => namesOrIds.some((n) => n === c.name || (n.length >= 12 && c.id.startsWith(n))));
  return removeAll(targets, options);
}

/**
 * A container a live owner may be using: running; paused (frozen by `docker
 * pause`, its session kept until `docker unpause`); or created and not started
 * yet (`docker run` and a fork's child are created, then started: a sweep in
 * between removed a session's container while it opened, and its first exec
 * failed "in a deleted state"). Only such a container of a live owner is a
 * session's, never a leftover.
 */
export function liveState(state: string): boolean {
  return state === "running" || state === "paused" || state === "created";
}

/**
 * Removes leftovers: shellwright containers that are stopped (not live), and
 * live ones whose creating process on this host has exited (a crash skipped
 * its close()). Kept containers are left alone unless includeKept.
 */
export async function reapDockerContainers(options: ReapOptions = {}): Promise<DockerContainerInfo[]> {
  const alive = options.ownerAlive ?? ownerAliveHere;
  const leftovers = (await listDockerContainers(options)).filter((c) => {
    if (c.keep && !options.includeKept) return false;
    return !liveState(c.state) || !alive(c.owner);
  });
  const removed = new Set(await removeAll(leftovers, options));
  return leftovers.filter((c) => removed.has(c.name));
}

async function removeAll(containers: DockerContainerInfo[], options: CliOptions): Promise<string[]> {
  const removed: string[] = [];
  // One at a time: dockerd 20.10 has been seen to deadlock in its network code
  // when `docker rm -f` tears many containers down at once.
  for (const container of containers) {
    const result = await runDockerCli(["rm", "-f", container.id], options);
    // One that vanished meanwhile is simply not reported as removed.
    if (result.code === 0) removed.push(container.name);
  }
  return removed;
}

export { ownerAliveHere };

function toInfo(row: Record<string, string>): DockerContainerInfo {
  const labels: Record<string, string> = {};
  // `docker ps` joins labels with commas; values of our own labels never contain one.
  for (const pair of (row.Labels ?? "").split(",")) {
    const eq = pair.indexOf("=");
    if (eq > 0) labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return {
    id: row.ID ?? "",
    name: (row.Names ?? "").split(",")[0] ?? "",
    image: row.Image ?? "",
    state: row.State ?? "",
    status: row.Status ?? "",
    createdAt: row.CreatedAt ?? "",
    keep: labels[KEEP_LABEL] === "1",
    owner: labels[OWNER_LABEL] ?? "",
    labels,
  };
}
