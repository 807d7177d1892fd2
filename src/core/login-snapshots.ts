/**
 * Login snapshots, captured once per origin (docs/persistence.md, "The login
 * profile"). A session's first snapshot is dumped from a `bash -l`, and a
 * slow profile (pyenv's init: 0.5–1.8 s, under a lock) paid by every session
 * and pool member multiplies under concurrency. A session opened from the
 * same origin (its transport's `loginOrigin`: the same backend, user, machine
 * or image and starting environment; and the same first cwd) while the
 * profile files are unchanged (their paths, sizes, mtimes and inodes: the
 * fingerprint its init prints) starts from the captured snapshot instead.
 *
 * Kept in this process's memory only: a snapshot holds the session's
 * variables, secrets included, so it is never written anywhere but into the
 * new session's own snapshot.
 */

import { createHash } from "node:crypto";

export interface LoginSnapshot {
  /** What the init printed about the profile files when this snapshot was dumped. */
  fingerprint: string;
  /** The snapshot file's bytes. */
  bytes: Buffer;
}

/** Origins remembered at once; the least recently used goes first. */
const MAX_ENTRIES = 32;

export class LoginSnapshots {
  readonly #entries = new Map<string, LoginSnapshot>();
  readonly #capturing = new Map<string, Promise<void>>();

  get(key: string): LoginSnapshot | undefined {
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: LoginSnapshot): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= MAX_ENTRIES) break;
      this.#entries.delete(oldest);
    }
  }

  /**
   * Runs `open` for `key`. Sessions opened at once from one origin run its
   * login once: the first runs alone (it logs in and captures, or finds the
   * capture stale and captures again, or finds it good), and those that
   * waited for it then open together, from its capture or, when it captured
   * nothing (no `stat` there, a failed login), each with its own login.
   */
  async open<T>(key: string, open: () => Promise<T>): Promise<T> {
    let waited = false;
    for (let running = this.#capturing.get(key); running !== undefined; running = this.#capturing.get(key)) {
      await running;
      waited = true;
    }
    if (waited) return open();
    let done!: () => void;
    this.#capturing.set(key, new Promise<void>((resolve) => (done = resolve)));
    try {
      return await open();
    } finally {
      this.#capturing.delete(key);
      done();
    }
  }

  /** Forgets every capture (tests). */
  clear(): void {
    this.#entries.clear();
  }
}

/** This process's captures, shared by every session it opens. */
export const loginSnapshots = new LoginSnapshots();

/** A key made of `parts` (environments included): hashed, so the key itself holds no value of them. */
export function originKey(parts: readonly unknown[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}
