/**
 * E2B's snapshots on serve: a snapshot is a fork of the sandbox's session,
 * taken now and held (not a sandbox: no envd, no timeout) until it is
 * deleted or the server stops. A sandbox created with the snapshot's id as
 * its template is one more fork of that held session, so sandboxes from one
 * snapshot are independent of it and of each other. Snapshots live as long
 * as the server (they are sessions, not images on disk): docs/e2b.md.
 */

import { randomBytes } from "node:crypto";
import type { Environment } from "../../core/environment.js";
import type { SessionRegistry } from "../sessions.js";
import { E2bError } from "./errors.js";
import type { SandboxEntry } from "./entry.js";
import { checkCopiesFiles, whenIdle } from "./fork.js";
import { BASE_TEMPLATE } from "./control-body.js";
import type { SandboxOrigin } from "./sandbox-table.js";

/** openapi.yml's tag on a snapshot template; this server keeps one build per name. */
const TAG = "default";
const NAME = /^[a-z0-9][a-z0-9._-]{0,127}$/;

export interface Snapshot extends SandboxOrigin {
  /** `<id>:default`, or `<name>:default` for a named one, as E2B's snapshotID. */
  readonly snapshotId: string;
  readonly name: string | undefined;
  /** The sandbox it was taken from. */
  readonly sandboxId: string;
  readonly createdAt: Date;
}

export class SnapshotStore {
  readonly #registry: SessionRegistry;
  readonly #limit: number;
  readonly #byId = new Map<string, Snapshot>();
  #closed = false;
  /** Takes whose fork is under way. */
  #taking = 0;

  /** `limit`: how many snapshots may be held at once (each is a live session of the backend). */
  constructor(registry: SessionRegistry, limit: number) {
    this.#registry = registry;
    this.#limit = limit;
  }

  /** Takes a snapshot of `entry` now; a name already taken moves to the new one and the old one is deleted. */
  async take(entry: SandboxEntry, name: string | undefined, signal: AbortSignal): Promise<Snapshot> {
    checkCopiesFiles(entry, "Snapshots");
    if (name !== undefined && (!NAME.test(name) || name === BASE_TEMPLATE))
      throw new E2bError(
        400,
        `name must be 1 to 128 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit, and not "${BASE_TEMPLATE}", got ${JSON.stringify(name)}`,
      );
    const replacing = name !== undefined && this.#byId.has(`${name}:${TAG}`);
    // Takes under way count too: two at once never go past the limit.
    if (!replacing && this.#byId.size + this.#taking >= this.#limit)
      throw new E2bError(
        429,
        `This server already holds its limit of ${this.#limit} snapshots (each is a live session); delete one (Sandbox.deleteSnapshot) and try again`,
      );
    this.#taking++;
    let session: Environment | undefined;
    try {
      [session] = await whenIdle(
        () => this.#registry.branch(entry.record.sandboxId, (env) => env.fork({ count: 1, signal })),
        signal,
      );
    } finally {
      this.#taking--;
    }
    if (this.#closed) {
      // The server stopped while the fork ran: nothing would close this one later.
      await closeQuietly(session!);
      throw new E2bError(503, "The server is stopping; the snapshot was not kept");
    }
    const snapshot: Snapshot = {
      snapshotId: `${name ?? randomBytes(6).toString("hex")}:${TAG}`,
      name,
      sandboxId: entry.record.sandboxId,
      createdAt: new Date(),
      session: session!,
      user: entry.record.user,
      homeDir: entry.record.homeDir,
      envVars: entry.envVars,
    };
    // The name's snapshot now (another take of the same name may have finished meanwhile) gives way to this one.
    const replaced = this.#byId.get(snapshot.snapshotId);
    this.#byId.set(snapshot.snapshotId, snapshot);
    if (replaced !== undefined) await closeQuietly(replaced.session);
    return snapshot;
  }

  /** The snapshot a template reference names (`id:tag`, or without the default tag), if any. */
  find(reference: string): Snapshot | undefined {
    return this.#byId.get(reference) ?? this.#byId.get(`${reference}:${TAG}`);
  }

  /** Held snapshots, oldest first, filtered as GET /snapshots is (`sandboxID`, `name` by name or id). */
  list(filter: { sandboxId?: string; name?: string }): Snapshot[] {
    const wanted = filter.name === undefined || filter.name === "" ? undefined : this.find(filter.name);
    return [...this.#byId.values()]
      .filter((snapshot) => filter.name === undefined || filter.name === "" || snapshot === wanted)
      .filter((snapshot) => filter.sandboxId === undefined || snapshot.sandboxId === filter.sandboxId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.snapshotId < b.snapshotId ? -1 : 1));
  }

  /** False when there was none. */
  async delete(reference: string): Promise<boolean> {
    const snapshot = this.find(reference);
    if (snapshot === undefined) return false;
    await this.#release(snapshot);
    return true;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#byId.values()];
    await Promise.all(all.map((snapshot) => this.#release(snapshot)));
  }

  async #release(snapshot: Snapshot): Promise<void> {
    this.#byId.delete(snapshot.snapshotId);
    await closeQuietly(snapshot.session);
  }
}

async function closeQuietly(session: Environment): Promise<void> {
  await session.close().catch(() => undefined);
}

/** openapi.yml's SnapshotInfo. */
export function snapshotInfo(snapshot: Snapshot): { snapshotID: string; names: string[] } {
  return { snapshotID: snapshot.snapshotId, names: snapshot.name === undefined ? [] : [snapshot.snapshotId] };
}
