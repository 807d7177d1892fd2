/**
 * What sessions of dead owners left behind, on every backend, for
 * `shellwright sessions` to list and `--prune` to remove. A live session's
 * owner watchdog normally cleans up after a crash; these are what remains
 * when it could not (it was killed too, the machine rebooted with the files
 * on disk, a docker engine that did not answer), and the first command of a
 * new named session killed before it saved the session.
 *
 * Each backend finds its own (its record's `leftovers`); only things that name
 * their owner are touched, when that owner is gone. Directories from before
 * owners were recorded are left alone.
 */

import { join } from "node:path";
import { LEFTOVER_SOURCES, type Leftover } from "../backends/index.js";
import type { SessionStore } from "./session-store.js";

export type { Leftover };

const UNFINISHED = "unfinished-session";

/** Everything a dead owner left: nothing here belongs to a live process. */
export async function findLeftovers(store: SessionStore): Promise<Leftover[]> {
  const found: Leftover[] = [];
  for (const source of LEFTOVER_SOURCES) found.push(...(await source.find()));
  for (const s of store.unfinished())
    if (!s.ownerAlive) found.push({ kind: UNFINISHED, what: s.name, owner: s.owner ?? "unknown" });
  return found;
}

/** Removes what findLeftovers found; returns what was removed. */
export async function pruneLeftovers(store: SessionStore, leftovers: Leftover[]): Promise<Leftover[]> {
  const removed: Leftover[] = [];
  for (const item of leftovers.filter((l) => l.kind === UNFINISHED)) {
    // Its recorded process groups and what carries its mark (local), and whatever its backend made for it (a container).
    for (const source of LEFTOVER_SOURCES) await source.removeUnfinished?.(item.what, join(store.root, item.what));
    store.remove(item.what);
    removed.push(item);
  }
  for (const source of LEFTOVER_SOURCES) removed.push(...(await source.remove(leftovers)));
  return removed;
}
