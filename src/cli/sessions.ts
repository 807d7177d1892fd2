/** `shellwright sessions [--json] [--prune]` and `shellwright close NAME` (flags: specs.ts). */

import {
  listDockerContainers,
  removeDockerContainers,
  type DockerContainerInfo,
} from "../backends/docker/containers.js";
import { SessionNotFoundError } from "../core/errors.js";
import type { ParsedCommand } from "./args.js";
import { findLeftovers, pruneLeftovers, type Leftover } from "./leftovers.js";
import { reopen } from "./named-session.js";
import { redactConfig, rememberSecrets } from "./secrets.js";
import { SessionStore } from "./session-store.js";

export async function list(parsed: ParsedCommand): Promise<number> {
  const store = new SessionStore();
  let leftovers = await findLeftovers(store);
  let pruned: Leftover[] | undefined;
  if (parsed.values.prune === true) {
    pruned = await pruneLeftovers(store, leftovers);
    leftovers = await findLeftovers(store);
  }
  // A stored config may carry env values and a gateway token: names are shown, values never.
  const sessions = store.list().map((s) => (s.config ? { ...s, config: redactConfig(s.config) } : s));
  const containers = await dockerContainers();
  if (parsed.values.json === true) {
    process.stdout.write(`${JSON.stringify({ sessions, containers, leftovers, ...(pruned ? { pruned } : {}) })}\n`);
    return 0;
  }
  for (const p of pruned ?? []) process.stdout.write(`removed ${p.kind} ${p.what} (owner ${p.owner} is gone)\n`);
  if (sessions.length === 0) process.stdout.write("no sessions\n");
  for (const s of sessions) process.stdout.write(`${s.name}\t${s.backend}\t${s.state.cwd}\tlast used ${s.updatedAt}\n`);
  if (containers.length > 0) {
    process.stdout.write("\nDocker containers labelled by Shellwright (`shellwright close NAME` removes one):\n");
    for (const c of containers) process.stdout.write(`${c.name}\t${c.image}\t${c.status}${c.keep ? "\tkept" : ""}\n`);
  }
  if (leftovers.length > 0) {
    process.stdout.write("\nLeft behind by processes that are gone (`shellwright sessions --prune` removes them):\n");
    for (const l of leftovers) process.stdout.write(`${l.kind}\t${l.what}\towner ${l.owner}\n`);
  }
  return 0;
}

export async function close(parsed: ParsedCommand): Promise<number> {
  const name = parsed.positionals[0]!;
  const store = new SessionStore();
  const stored = store.load(name);
  rememberSecrets(stored?.config);
  if (stored === undefined) {
    // A leftover container (of a library session) can be closed by its name too.
    if ((await dockerContainers()).some((c) => c.name === name) && (await removeDockerContainers([name])).length > 0) {
      process.stdout.write(`removed container ${name}\n`);
      return 0;
    }
    throw new SessionNotFoundError(name);
  }
  try {
    const env = await reopen(stored, store, { forClose: true });
    await env.close();
  } finally {
    // A backend that is gone leaves nothing to reattach to: forget the session either way.
    store.remove(name);
  }
  process.stdout.write(`closed ${name}\n`);
  return 0;
}

/** Shellwright's containers, when a Docker engine answers; none otherwise. */
async function dockerContainers(): Promise<DockerContainerInfo[]> {
  try {
    return await listDockerContainers({ timeoutMs: 5000 });
  } catch {
    return [];
  }
}
