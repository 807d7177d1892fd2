/** `shellwright sessions [--json] [--prune]` and `shellwright close NAME` (flags: specs.ts). */

import { KEPT_THINGS, type KeptThing, type KeptThings } from "../backends/index.js";
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
  const kept = await Promise.all(KEPT_THINGS.map(async (source) => ({ source, things: await keptBy(source) })));
  const containers = kept.flatMap((k) => k.things);
  if (parsed.values.json === true) {
    process.stdout.write(`${JSON.stringify({ sessions, containers, leftovers, ...(pruned ? { pruned } : {}) })}\n`);
    return 0;
  }
  for (const p of pruned ?? []) process.stdout.write(`removed ${p.kind} ${p.what} (owner ${p.owner} is gone)\n`);
  if (sessions.length === 0) process.stdout.write("no sessions\n");
  for (const s of sessions) process.stdout.write(`${s.name}\t${s.backend}\t${s.state.cwd}\tlast used ${s.updatedAt}\n`);
  for (const { source, things } of kept) {
    if (things.length === 0) continue;
    process.stdout.write(`\n${source.heading}:\n`);
    for (const c of things) process.stdout.write(`${c.name}\t${c.image}\t${c.status}${c.keep ? "\tkept" : ""}\n`);
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
    for (const source of KEPT_THINGS) {
      if ((await keptBy(source)).some((c) => c.name === name) && (await source.remove([name])).length > 0) {
        process.stdout.write(`removed ${source.noun} ${name}\n`);
        return 0;
      }
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

/** What `source` keeps (Shellwright's containers), when its engine answers; none otherwise. */
async function keptBy(source: KeptThings): Promise<KeptThing[]> {
  try {
    return await source.list({ timeoutMs: 5000 });
  } catch {
    return [];
  }
}
