/**
 * The sessions a gateway hosts, and the limits on them: how many sessions,
 * how many executions at once (both answered with 429 when full), and how
 * long a session may sit idle before it is closed.
 *
 * A long-lived execution (the client says `longLived`: a background
 * process's output follower or end watcher, which runs as long as the
 * process) is not a call in flight: it counts against bounds of its own, per
 * session and across sessions, and never against maxConcurrentExecutions. So
 * one client's PTYs cannot make another client's call wait, and a client
 * past its bound gets an error at once, not a retry.
 */

import type { Environment, ExecuteOptions, ExecuteResult } from "../core/environment.js";
import { HttpError } from "./http.js";
import type { SessionInfo } from "../http/gateway-protocol.js";

export interface RegistryLimits {
  maxSessions: number;
  maxConcurrentExecutions: number;
  /** Long-lived executions one session may run at once. */
  maxLongLivedPerSession: number;
  /** Long-lived executions across all sessions (all of the token's). */
  maxLongLivedExecutions: number;
  /** A session with no execution running for this long is closed. */
  idleTimeoutMs: number;
}

interface Entry {
  readonly env: Environment;
  readonly createdAt: number;
  lastActiveAt: number;
  readonly running: Map<string, AbortController>;
  /** How many of `running` are long-lived. */
  longLived: number;
  /** Checkpoints, rollbacks and forks under way: the reaper leaves the session while one runs. */
  operations: number;
  /** Ids of executions started recently (running or finished), oldest first: an id runs at most once. */
  readonly seen: Map<string, "running" | "finished">;
}

/** How many execution ids a session remembers, so a resent request is never run twice. */
const REMEMBERED_EXECUTIONS = 1000;
/** How soon a client may try again after a 429 for executions. */
const BUSY_RETRY_MS = 100;

export class SessionRegistry {
  readonly #limits: RegistryLimits;
  readonly #sessions = new Map<string, Entry>();
  #opening = 0;
  /** Executions in flight (not long-lived). */
  #running = 0;
  #longLived = 0;
  #shuttingDown = false;
  readonly #reaper: NodeJS.Timeout;

  constructor(limits: RegistryLimits) {
    this.#limits = limits;
    const sweepMs = Math.min(Math.max(Math.floor(limits.idleTimeoutMs / 4), 50), 30_000);
    this.#reaper = setInterval(() => void this.reapIdle(), sweepMs);
    this.#reaper.unref();
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }
  get size(): number {
    return this.#sessions.size;
  }
  /** Executions in flight, the ones maxConcurrentExecutions bounds (long-lived ones are not counted). */
  get runningExecutions(): number {
    return this.#running;
  }
  get longLivedExecutions(): number {
    return this.#longLived;
  }

  /** Opens a session through `open`, counting it against the limit while it starts. */
  async create(open: () => Promise<Environment>): Promise<SessionInfo> {
    this.#refuseWhenShuttingDown();
    if (this.#sessions.size + this.#opening >= this.#limits.maxSessions) {
      throw new HttpError(
        429,
        "TOO_MANY_SESSIONS",
        `The gateway already hosts its limit of ${this.#limits.maxSessions} sessions (maxSessions); close one (DELETE /v1/sessions/{id}) and try again`,
      );
    }
    this.#opening++;
    let env: Environment;
    try {
      env = await open();
    } finally {
      this.#opening--;
    }
    if (this.#shuttingDown) {
      await env.close();
      this.#refuseWhenShuttingDown();
    }
    return this.#info(this.#add(env));
  }

  /**
   * Runs a checkpoint, rollback, listing or release on session `id`'s
   * environment (which refuses one beside a running command); the session is
   * active meanwhile, so the idle reaper leaves it.
   */
  async branch<T>(id: string, op: (env: Environment) => T | Promise<T>): Promise<T> {
    this.#refuseWhenShuttingDown();
    const entry = this.#get(id);
    entry.operations++;
    try {
      return await op(entry.env);
    } finally {
      entry.operations--;
      entry.lastActiveAt = Date.now();
    }
  }

  /** Forks session `id` into `count` new sessions of this gateway, counted against maxSessions while they open. */
  async fork(id: string, count: number, signal: AbortSignal): Promise<SessionInfo[]> {
    this.#refuseWhenShuttingDown();
    const entry = this.#get(id);
    const room = this.#limits.maxSessions - this.#sessions.size - this.#opening;
    if (count > room) {
      throw new HttpError(
        429,
        "TOO_MANY_SESSIONS",
        `A fork of ${count} needs ${count} new sessions and the gateway has room for ${Math.max(room, 0)} (maxSessions ${this.#limits.maxSessions}); close some (DELETE /v1/sessions/{id}) or fork fewer`,
      );
    }
    this.#opening += count;
    entry.operations++;
    let children: Environment[];
    try {
      children = await entry.env.fork({ count, signal });
    } finally {
      this.#opening -= count;
      entry.operations--;
      entry.lastActiveAt = Date.now();
    }
    if (this.#shuttingDown) {
      await Promise.all(children.map((child) => child.close().catch(() => undefined)));
      this.#refuseWhenShuttingDown();
    }
    return children.map((child) => this.#info(this.#add(child)));
  }

  #add(env: Environment): Entry {
    const now = Date.now();
    const entry: Entry = {
      env,
      createdAt: now,
      lastActiveAt: now,
      running: new Map(),
      longLived: 0,
      operations: 0,
      seen: new Map(),
    };
    this.#sessions.set(env.id, entry);
    return entry;
  }

  /** Session `id`'s environment (404 when there is none), for an API that keeps its own record of it. */
  environment(id: string): Environment {
    return this.#get(id).env;
  }

  info(id: string): SessionInfo {
    return this.#info(this.#get(id));
  }

  list(): SessionInfo[] {
    return [...this.#sessions.values()].map((entry) => this.#info(entry));
  }

  async close(id: string): Promise<void> {
    const entry = this.#get(id);
    this.#sessions.delete(id);
    await entry.env.close();
  }

  /**
   * Claims an execution slot, or throws at once (404, 409, 429, 503) so the
   * caller can still answer with a plain status. `signal` is the request's own
   * (aborted when the client goes away); the execution can also be cancelled
   * by id. The returned function must be called exactly once.
   */
  begin(
    id: string,
    executionId: string,
    signal: AbortSignal,
    longLived = false,
  ): (command: string, options: Omit<ExecuteOptions, "signal">) => Promise<ExecuteResult> {
    const slot = this.claim(id, executionId, signal, longLived);
    const env = this.#get(id).env;
    return async (command, options) => {
      try {
        return await env.execute(command, { ...options, signal: slot.signal });
      } finally {
        slot.release();
      }
    };
  }

  /**
   * Claims an execution slot as begin() does, for work that is not one
   * execute() (a process spawned in the session): `signal` aborts when the
   * execution is cancelled or the gateway shuts down; `release` must be
   * called exactly once, when the work has ended.
   */
  claim(
    id: string,
    executionId: string,
    signal: AbortSignal,
    longLived = false,
  ): { signal: AbortSignal; release(): void } {
    this.#refuseWhenShuttingDown();
    const entry = this.#get(id);
    const seen = entry.seen.get(executionId);
    if (seen !== undefined) {
      throw new HttpError(
        409,
        "DUPLICATE_EXECUTION",
        `Execution ${JSON.stringify(executionId)} ${seen === "running" ? "is already running" : "already ran"} in session ${id}; use a new executionId`,
        { option: "executionId" },
      );
    }
    if (longLived) this.#refuseLongLived(id, entry);
    else if (this.#running >= this.#limits.maxConcurrentExecutions) {
      throw new HttpError(
        429,
        "TOO_MANY_EXECUTIONS",
        `The gateway is running its limit of ${this.#limits.maxConcurrentExecutions} executions at once (maxConcurrentExecutions); retry shortly`,
        { retryAfterMs: BUSY_RETRY_MS },
      );
    }
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) controller.abort();
    entry.running.set(executionId, controller);
    entry.seen.set(executionId, "running");
    if (entry.seen.size > REMEMBERED_EXECUTIONS) entry.seen.delete(entry.seen.keys().next().value!);
    entry.lastActiveAt = Date.now();
    if (longLived) {
      entry.longLived++;
      this.#longLived++;
    } else this.#running++;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      if (longLived) {
        entry.longLived--;
        this.#longLived--;
      } else this.#running--;
      entry.running.delete(executionId);
      if (entry.seen.has(executionId)) entry.seen.set(executionId, "finished");
      entry.lastActiveAt = Date.now();
      signal.removeEventListener("abort", onAbort);
    };
    return { signal: controller.signal, release };
  }

  /** Whether this session has seen an execution id recently; undefined when it has not. */
  executionState(id: string, executionId: string): "running" | "finished" | undefined {
    return this.#get(id).seen.get(executionId);
  }

  /** Interrupts a running execution; false when it is not running (finished, or never started). */
  cancel(id: string, executionId: string): boolean {
    const controller = this.#get(id).running.get(executionId);
    if (!controller) return false;
    controller.abort();
    return true;
  }

  /** Closes the sessions idle for longer than idleTimeoutMs; returns their ids. */
  async reapIdle(now = Date.now()): Promise<string[]> {
    const idle = [...this.#sessions.values()].filter(
      (e) => e.running.size === 0 && e.operations === 0 && now - e.lastActiveAt >= this.#limits.idleTimeoutMs,
    );
    for (const entry of idle) this.#sessions.delete(entry.env.id);
    await Promise.all(idle.map((entry) => entry.env.close().catch(() => undefined)));
    return idle.map((entry) => entry.env.id);
  }

  /** Refuses new work, interrupts what runs, and closes every session. */
  async shutdown(): Promise<void> {
    this.#shuttingDown = true;
    clearInterval(this.#reaper);
    const entries = [...this.#sessions.values()];
    this.#sessions.clear();
    for (const entry of entries) for (const controller of entry.running.values()) controller.abort();
    await Promise.all(entries.map((entry) => entry.env.close().catch(() => undefined)));
  }

  #get(id: string): Entry {
    const entry = this.#sessions.get(id);
    if (!entry) {
      throw new HttpError(
        404,
        "SESSION_NOT_FOUND",
        `No session ${JSON.stringify(id)} on this gateway: it was closed, reaped after ${this.#limits.idleTimeoutMs} ms idle, or the gateway restarted; create a new session`,
      );
    }
    return entry;
  }

  /** No retry hint: a long-lived execution ends when its process does, not soon. */
  #refuseLongLived(id: string, entry: Entry): void {
    const { maxLongLivedPerSession, maxLongLivedExecutions } = this.#limits;
    const end = "end one (kill a background process or PTY of the session) and try again";
    if (entry.longLived >= maxLongLivedPerSession)
      throw new HttpError(
        429,
        "TOO_MANY_LONG_LIVED_EXECUTIONS",
        `Session ${id} already runs its limit of ${maxLongLivedPerSession} long-lived executions (maxLongLivedPerSession): the output followers and end watchers of its background processes and PTYs; ${end}`,
      );
    if (this.#longLived >= maxLongLivedExecutions)
      throw new HttpError(
        429,
        "TOO_MANY_LONG_LIVED_EXECUTIONS",
        `The gateway already runs its limit of ${maxLongLivedExecutions} long-lived executions across all sessions (maxLongLivedExecutions): the output followers and end watchers of background processes and PTYs; ${end}`,
      );
  }

  #refuseWhenShuttingDown(): void {
    if (this.#shuttingDown)
      throw new HttpError(503, "SHUTTING_DOWN", "The gateway is shutting down; the command was not run or was stopped");
  }

  #info(entry: Entry): SessionInfo {
    const { env } = entry;
    return {
      id: env.id,
      backend: env.backend,
      cwd: env.cwd,
      snapshotReady: env.snapshotReady,
      paths: { snapshot: env.paths.snapshot, cwdFile: env.paths.cwdFile },
      createdAt: new Date(entry.createdAt).toISOString(),
      lastActiveAt: new Date(entry.lastActiveAt).toISOString(),
      runningExecutions: entry.running.size - entry.longLived,
      longLivedExecutions: entry.longLived,
      ...(env.workspaceRoot === undefined ? {} : { workspaceRoot: env.workspaceRoot }),
    };
  }
}
