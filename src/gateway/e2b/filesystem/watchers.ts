/**
 * The watchers of CreateWatcher / GetWatcherEvents / RemoveWatcher: a watch
 * whose events wait here until the client polls for them. Each sandbox sees
 * only its own (an id from another sandbox is not found); a watcher ends when
 * removed, when its sandbox's session closes, or when the service closes.
 */

import { Code, ConnectError } from "@connectrpc/connect";
import { randomUUID } from "node:crypto";
import type { FilesystemEvent } from "../gen/filesystem/filesystem_pb.js";
import type { E2bSandbox } from "../sandbox.js";
import { startWatch, type SandboxWatch, type WatchRequest } from "./watch.js";

/** Each watcher is a command polling on the backend: a sandbox gets this many at once. */
export const MAX_WATCHERS_PER_SANDBOX = 32;
/** Events kept for a client that does not poll; past this the oldest go (the client lost them either way). */
export const MAX_HELD_EVENTS = 10_000;

interface Held {
  watch: SandboxWatch;
  events: FilesystemEvent[];
  ended: boolean;
  dropHook: () => void;
}

export class Watchers {
  readonly #bySandbox = new Map<E2bSandbox, Map<string, Held>>();

  async create(sandbox: E2bSandbox, request: WatchRequest): Promise<string> {
    const mine = this.#bySandbox.get(sandbox) ?? new Map<string, Held>();
    if (mine.size >= MAX_WATCHERS_PER_SANDBOX)
      throw new ConnectError(
        `this sandbox already has ${MAX_WATCHERS_PER_SANDBOX} watchers; remove one (RemoveWatcher) first`,
        Code.ResourceExhausted,
      );
    const events: FilesystemEvent[] = [];
    const watch = await startWatch(sandbox, request, (event) => {
      events.push(event);
      if (events.length > MAX_HELD_EVENTS) events.splice(0, events.length - MAX_HELD_EVENTS);
    });
    const id = randomUUID();
    const held: Held = { watch, events, ended: false, dropHook: () => undefined };
    held.dropHook = sandbox.session.beforeClose(() => this.#drop(sandbox, id));
    void watch.ended.then(() => (held.ended = true));
    mine.set(id, held);
    this.#bySandbox.set(sandbox, mine);
    return id;
  }

  /** The events since the last call; once an ended watcher is drained, it is gone. */
  take(sandbox: E2bSandbox, id: string): FilesystemEvent[] {
    const held = this.#find(sandbox, id);
    const events = held.events.splice(0);
    if (events.length === 0 && held.ended) {
      void this.#drop(sandbox, id);
      throw new ConnectError(`watcher '${id}' ended: its directory '${held.watch.path}' is gone`, Code.NotFound);
    }
    return events;
  }

  async remove(sandbox: E2bSandbox, id: string): Promise<void> {
    this.#find(sandbox, id);
    await this.#drop(sandbox, id);
  }

  async close(): Promise<void> {
    const all = [...this.#bySandbox].flatMap(([sandbox, mine]) =>
      [...mine.keys()].map((id) => this.#drop(sandbox, id)),
    );
    await Promise.all(all);
  }

  #find(sandbox: E2bSandbox, id: string): Held {
    const held = this.#bySandbox.get(sandbox)?.get(id);
    if (held === undefined) throw new ConnectError(`watcher '${id}' not found`, Code.NotFound);
    return held;
  }

  async #drop(sandbox: E2bSandbox, id: string): Promise<void> {
    const mine = this.#bySandbox.get(sandbox);
    const held = mine?.get(id);
    if (mine === undefined || held === undefined) return;
    mine.delete(id);
    if (mine.size === 0) this.#bySandbox.delete(sandbox);
    held.dropHook();
    await held.watch.close().catch(() => undefined);
  }
}
