/**
 * Named CLI sessions that outlive the process: one private directory per
 * session under $SHELLWRIGHT_HOME/sessions (default ~/.shellwright), holding
 * state.json (how to reattach) and, for the local backend, the snapshot files.
 */

import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { ownerAliveHere, readOwner, shellwrightHome, writeOwner, type EnvironmentConfig } from "../backends/index.js";
import type { SessionState } from "../core/environment.js";
import { UsageError } from "./args.js";

export interface StoredSession {
  name: string;
  backend: string;
  /** The config the session was created with (0600: it may hold a gateway token), plus what reattaching needs. */
  config?: EnvironmentConfig;
  state: SessionState;
  createdAt: string;
  updatedAt: string;
}

export { shellwrightHome };

const SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function validateSessionName(name: string): string {
  if (!SESSION_NAME.test(name)) {
    throw new UsageError(
      `invalid session name ${JSON.stringify(name)}: use letters, digits, '.', '_' or '-' (at most 64)`,
    );
  }
  return name;
}

export class SessionStore {
  readonly root: string;

  constructor(home = shellwrightHome()) {
    this.root = join(home, "sessions");
  }

  /** The session's private directory (created 0700). */
  dir(name: string): string {
    const dir = join(this.root, validateSessionName(name));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    return dir;
  }

  load(name: string): StoredSession | undefined {
    try {
      return JSON.parse(
        readFileSync(join(this.root, validateSessionName(name), "state.json"), "utf8"),
      ) as StoredSession;
    } catch {
      return undefined;
    }
  }

  /** Written to a temp file and renamed, so a concurrent reader never sees half of it. */
  save(session: StoredSession): void {
    const file = join(this.dir(session.name), "state.json");
    const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
    writeFileSync(temp, `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, file);
  }

  /** The entries of the store's directory; none when it does not exist yet. */
  #names(): string[] {
    try {
      return readdirSync(this.root);
    } catch {
      return [];
    }
  }

  list(): StoredSession[] {
    return this.#names()
      .map((name) => this.load(name))
      .filter((session): session is StoredSession => session !== undefined)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Marks a new name as being created by this process, before its first
   * command runs: if the process dies before state.json is written, the
   * directory is still found (and pruned) by `shellwright sessions`.
   */
  markPending(name: string): void {
    writeOwner(this.dir(name));
  }

  /** Directories without a state.json: a first command still running, or one killed before it finished. */
  unfinished(): { name: string; dir: string; owner: string | undefined; ownerAlive: boolean }[] {
    return this.#names()
      .filter((name) => SESSION_NAME.test(name) && this.load(name) === undefined)
      .map((name) => {
        const dir = join(this.root, name);
        const owner = readOwner(dir);
        return { name, dir, owner, ownerAlive: owner !== undefined && ownerAliveHere(owner) };
      })
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  remove(name: string): void {
    rmSync(join(this.root, validateSessionName(name)), { recursive: true, force: true });
  }
}
