/**
 * A pool of sessions opened ahead: `acquire()` hands out one that is already
 * open (its snapshot taken, its fast path started) instead of paying the
 * backend's open cost then.
 *
 * It is a layer above the Environment contract and knows no backend: it
 * opens members with the function it is given (createEnvironment with one
 * config) and never reuses one. A handed-out session is the caller's; its
 * close() ends it, and the pool opens a replacement in the background. So
 * "fresh" holds by construction: no member ever ran a caller's command
 * before it was handed out.
 */

import type { Environment } from "../core/environment.js";
import { SessionClosedError } from "../core/errors.js";
import type { NormalizedPoolOptions } from "./options.js";
import { helperDiedSinceWarm, warmUp } from "./warm.js";

export interface PoolStats {
  /** Members open and waiting to be handed out. */
  idle: number;
  /** Members being opened by the background refill. */
  opening: number;
  /** Sessions handed out and not closed yet. */
  handedOut: number;
}

export interface EnvironmentPool {
  /** The number of members the pool keeps opened ahead. */
  readonly size: number;
  readonly closed: boolean;
  /**
   * A fresh session: a warm member when one is idle (checked first: a dead
   * one is closed and replaced, never handed out), otherwise one opened now,
   * as createEnvironment would. Close it when done; it is never reused.
   */
  acquire(): Promise<Environment>;
  /** Resolves once `size` members are idle; rejects with the backend's error if opening one failed meanwhile. */
  ready(): Promise<void>;
  stats(): PoolStats;
  /** Ends every member, idle or handed out, and every open in flight. */
  close(): Promise<void>;
}

/** After a failed open the refill waits this long, doubling per failure in a row (a backend that is down, a limit reached). */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 10_000;
/**
 * After a warm hand-out the refill waits this long before it opens the
 * replacement, so that open does not run beside the caller's first call.
 * Opening a member starts processes, and Node's spawn blocks this process
 * for milliseconds each time. A login shell then reads its profile on the
 * same cores. Started at once, the refill made a warm acquire + first call
 * 24 ms instead of 5 ms on local at load 1.2 (bench/RESULTS.md).
 */
const REFILL_AFTER_HANDOUT_MS = 100;

export class Pool implements EnvironmentPool {
  readonly #open: () => Promise<Environment>;
  readonly #options: NormalizedPoolOptions;
  /** Oldest first: the oldest member has had the longest to get its fast path ready. */
  readonly #idle: Environment[] = [];
  readonly #handedOut = new Set<Environment>();
  /** Every open in flight, refill and direct, so close() can wait for them and end what they bring. */
  readonly #inFlight = new Set<Promise<unknown>>();
  #refilling = 0;
  /** acquire() calls opening a session themselves: the refill waits for them, so a burst is not slowed by it. */
  #direct = 0;
  #failures = 0;
  #retry: NodeJS.Timeout | undefined;
  #deferredRefill: NodeJS.Timeout | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;
  #readyWaiters: { resolve: () => void; reject: (error: unknown) => void }[] = [];

  constructor(open: () => Promise<Environment>, options: NormalizedPoolOptions, first?: Environment) {
    this.#open = open;
    this.#options = options;
    if (first !== undefined) this.#idle.push(first);
    this.#refill();
  }

  get size(): number {
    return this.#options.size;
  }

  get closed(): boolean {
    return this.#closed;
  }

  stats(): PoolStats {
    return { idle: this.#idle.length, opening: this.#refilling, handedOut: this.#handedOut.size };
  }

  async acquire(): Promise<Environment> {
    if (this.#closed) throw new SessionClosedError("The pool is closed; create a new pool to open more sessions.");
    for (let member = this.#idle.shift(); member !== undefined; member = this.#idle.shift()) {
      if (await this.#healthy(member)) {
        this.#refillLater();
        return this.#handOut(member);
      }
      this.#refill();
      this.#options.onWarning(`a ${member.backend} member (session ${member.id}) failed its check; replaced`);
      void this.#track(member.close().catch(() => undefined));
    }
    this.#direct++;
    try {
      // Tracked up to the hand-out, so a close() meanwhile waits for this session to be closed too.
      return await this.#track(this.#open().then((session) => this.#handOut(session)));
    } finally {
      this.#direct--;
      this.#refill();
    }
  }

  ready(): Promise<void> {
    if (this.#closed) return Promise.reject(new SessionClosedError("The pool is closed."));
    if (this.#idle.length >= this.size) return Promise.resolve();
    return new Promise((resolve, reject) => this.#readyWaiters.push({ resolve, reject }));
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    clearTimeout(this.#deferredRefill);
    this.#settleReady(new SessionClosedError("The pool closed before it was full."));
    // An open in flight ends in #handOut or #addIdle, which close what arrives after this point; both are tracked.
    await Promise.allSettled([...this.#inFlight]);
    const members = [...this.#idle.splice(0), ...this.#handedOut];
    this.#handedOut.clear();
    await Promise.allSettled(members.map((member) => member.close()));
  }

  /** The check before hand-out: one call that must answer, empty and with exit 0 (a dead container or connection fails it), and the helper that was ready at warm-up still alive. */
  async #healthy(member: Environment): Promise<boolean> {
    if (member.closed) return false;
    try {
      const result = await member.execute(":", { timeoutMs: this.#options.checkTimeoutMs });
      // A helper that died while the member waited fails it too, even though the check itself passed on the plain path.
      return result.exitCode === 0 && !result.timedOut && result.output === "" && !helperDiedSinceWarm(member);
    } catch {
      return false;
    }
  }

  async #handOut(session: Environment): Promise<Environment> {
    if (this.#closed) {
      await session.close().catch(() => undefined);
      throw new SessionClosedError("The pool closed while this session was being opened.");
    }
    this.#handedOut.add(session);
    session.beforeClose(() => void this.#handedOut.delete(session));
    return session;
  }

  #track<T>(promise: Promise<T>): Promise<T> {
    this.#inFlight.add(promise);
    void promise.then(
      () => this.#inFlight.delete(promise),
      () => this.#inFlight.delete(promise),
    );
    return promise;
  }

  /** Opens members until `size` are idle or opening, a few at a time, unless a direct open or a retry wait is under way. */
  #refill(): void {
    while (
      !this.#closed &&
      this.#retry === undefined &&
      this.#direct === 0 &&
      this.#refilling < this.#options.refillConcurrency &&
      this.#idle.length + this.#refilling < this.size
    ) {
      this.#refilling++;
      // Tracked up to the member's arrival, so a close() meanwhile waits for it to be closed too.
      void this.#track(
        this.#open()
          .then((member) => warmUp(member, this.#options.checkTimeoutMs))
          .then(
            (member) => this.#addIdle(member),
            (error: unknown) => this.#openFailed(error),
          ),
      );
    }
  }

  /** The refill after a warm hand-out: later, once the caller's first call has had the cores (REFILL_AFTER_HANDOUT_MS). */
  #refillLater(): void {
    if (this.#deferredRefill !== undefined || this.#closed) return;
    // Not unref'd: an owner awaiting ready() after an acquire must not exit before the refill starts.
    this.#deferredRefill = setTimeout(() => {
      this.#deferredRefill = undefined;
      this.#refill();
    }, REFILL_AFTER_HANDOUT_MS);
  }

  async #addIdle(member: Environment): Promise<void> {
    this.#refilling--;
    this.#failures = 0;
    if (this.#closed) {
      await member.close().catch(() => undefined);
      return;
    }
    this.#idle.push(member);
    if (this.#idle.length >= this.size) this.#settleReady();
    this.#refill();
  }

  #openFailed(error: unknown): void {
    this.#refilling--;
    if (this.#closed) return;
    this.#failures++;
    const waitMs = Math.min(RETRY_FIRST_MS * 2 ** (this.#failures - 1), RETRY_MAX_MS);
    if (this.#failures === 1) {
      const message = error instanceof Error ? error.message : String(error);
      this.#options.onWarning(`opening a member failed (retrying from ${waitMs} ms, backing off): ${message}`);
    }
    this.#settleReady(error);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#refill();
    }, waitMs);
    // A pool waiting to retry must not keep its owner alive.
    this.#retry.unref();
  }

  #settleReady(error?: unknown): void {
    const waiters = this.#readyWaiters.splice(0);
    for (const waiter of waiters) {
      if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
  }
}
