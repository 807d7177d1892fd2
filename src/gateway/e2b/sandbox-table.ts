/**
 * The sandboxes serve's E2B API hosts. Each is a session of the gateway's
 * registry (so maxSessions, idle reaping and shutdown apply) with E2B's
 * facts beside it; a sandbox ends when its timeout passes, when it is killed,
 * or when the registry closes its session (reaped, or the server stops).
 */

import { randomBytes } from "node:crypto";
import type { RouteContext } from "../routes.js";
import { E2bError, sandboxNotFound } from "./errors.js";
import { shellQuote } from "../../core/script.js";
import type { CommandsMode, SandboxEntry } from "./entry.js";
import { ProcessTable } from "./process/table.js";
import type { Environment } from "../../core/environment.js";
import { whenIdle } from "./fork.js";

/** A session a new sandbox can start from (a snapshot's), and what its sandbox was made with. */
export interface SandboxOrigin {
  readonly session: Environment;
  readonly user: string;
  readonly homeDir: string;
  readonly envVars: Readonly<Record<string, string>>;
}

export interface NewSandbox {
  templateId: string;
  timeoutS: number;
  envVars: Record<string, string>;
  metadata: Record<string, string>;
  commands: CommandsMode;
}

/** setTimeout's ceiling on one timer; longer timeouts re-arm. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class SandboxTable {
  readonly #ctx: RouteContext;
  readonly #entries = new Map<string, SandboxEntry>();

  constructor(ctx: RouteContext) {
    this.#ctx = ctx;
  }

  async create(request: NewSandbox): Promise<SandboxEntry> {
    let session: Environment | undefined;
    await this.#ctx.registry.create(async () => {
      session = await this.#ctx.openSession(
        Object.keys(request.envVars).length === 0 ? {} : { env: request.envVars },
        (message) => this.#ctx.log(`e2b sandbox: ${message}`),
      );
      return session;
    });
    const opened = session!;
    // The user commands run as in the backend, its home the session's starting directory (docs/e2b.md).
    return this.#admit(opened, request, { user: await userOf(opened), homeDir: opened.cwd });
  }

  /**
   * `count` new sandboxes, each a fork of `parent`'s session as it is now
   * (its files too, where the backend's fork copies them: fork.ts decides),
   * living `timeoutS`; the parent runs on untouched.
   */
  async fork(parent: SandboxEntry, count: number, timeoutS: number, signal: AbortSignal): Promise<SandboxEntry[]> {
    const children = await whenIdle(() => this.#ctx.registry.fork(parent.record.sandboxId, count, signal), signal);
    const { templateId, envVars, metadata, commands } = parent;
    const request = { templateId, timeoutS, envVars: { ...envVars }, metadata: { ...metadata }, commands };
    return children.map((child) => this.#admit(this.#ctx.registry.environment(child.id), request, parent.record));
  }

  /**
   * A new sandbox from `origin`, a session this table does not run as a
   * sandbox (a snapshot's): one fork of it, counted as a session of the
   * gateway; `request.envVars` are exported in it before anything runs.
   */
  async createFrom(origin: SandboxOrigin, request: NewSandbox): Promise<SandboxEntry> {
    let child: Environment | undefined;
    await this.#ctx.registry.create(async () => {
      [child] = await origin.session.fork({ count: 1 });
      return child!;
    });
    const opened = child!;
    try {
      await exportVariables(opened, request.envVars);
    } catch (error) {
      await this.#ctx.registry.close(opened.id).catch(() => undefined);
      throw error;
    }
    return this.#admit(opened, { ...request, envVars: { ...origin.envVars, ...request.envVars } }, origin);
  }

  #admit(opened: Environment, request: NewSandbox, home: { user: string; homeDir: string }): SandboxEntry {
    const now = new Date();
    const entry: SandboxEntry = {
      record: {
        sandboxId: opened.id,
        session: opened,
        accessToken: randomBytes(32).toString("hex"),
        user: home.user,
        homeDir: home.homeDir,
        paths: this.#ctx.paths,
        tokenMask: this.#ctx.tokenMask,
      },
      templateId: request.templateId,
      metadata: request.metadata,
      startedAt: now,
      endAt: now,
      timer: undefined,
      commands: request.commands,
      processes: new ProcessTable(this.#ctx.tokenMask),
      envVars: request.envVars,
      openRpcs: new Set(),
    };
    this.#entries.set(opened.id, entry);
    opened.beforeClose(async () => {
      // Closed from anywhere (reaped, shut down, killed): its processes end with it, and it leaves the table.
      this.#entries.delete(opened.id);
      clearTimeout(entry.timer);
      cutOpenRpcs(entry);
      await entry.processes.killAll();
    });
    this.setTimeout(entry, request.timeoutS);
    return entry;
  }

  /** The live sandbox `id`, or E2B's 404. */
  get(id: string): SandboxEntry {
    const entry = this.#entries.get(id);
    if (entry === undefined || entry.record.session.closed) throw sandboxNotFound(id);
    return entry;
  }

  /** The live sandbox `id`, or undefined. */
  find(id: string): SandboxEntry | undefined {
    const entry = this.#entries.get(id);
    return entry === undefined || entry.record.session.closed ? undefined : entry;
  }

  list(): SandboxEntry[] {
    return [...this.#entries.values()].filter((entry) => !entry.record.session.closed);
  }

  /** From now, the sandbox lives `timeoutS` more seconds (E2B's setTimeout replaces the deadline, shorter or longer). */
  setTimeout(entry: SandboxEntry, timeoutS: number): void {
    clearTimeout(entry.timer);
    entry.endAt = new Date(Date.now() + timeoutS * 1000);
    const arm = (): void => {
      const left = entry.endAt.getTime() - Date.now();
      entry.timer = setTimeout(
        () => (left > MAX_TIMER_MS ? arm() : void this.kill(entry.record.sandboxId).catch(() => undefined)),
        Math.min(Math.max(left, 0), MAX_TIMER_MS),
      );
      entry.timer.unref();
    };
    arm();
  }

  /** Ends the sandbox: every process it ran, then its session. */
  async kill(id: string): Promise<void> {
    const entry = this.get(id);
    this.#entries.delete(id);
    clearTimeout(entry.timer);
    cutOpenRpcs(entry);
    await entry.processes.killAll();
    await this.#ctx.registry.close(id).catch(() => undefined);
  }

  close(): void {
    for (const entry of this.#entries.values()) clearTimeout(entry.timer);
  }
}

/**
 * A sandbox that ends takes its connections with it: each open envd stream is
 * dropped (the socket reset, no end event), before its processes are killed
 * so none reports an exit first. The SDK then asks /health, gets 502 and says
 * the sandbox was killed or reached its end of life, as it does on E2B.
 */
function cutOpenRpcs(entry: SandboxEntry): void {
  for (const res of entry.openRpcs) res.destroy();
  entry.openRpcs.clear();
}

/**
 * Sets `vars` in the session's shell state, sent as the stdin of a `source`
 * so that no value is on a command line.
 */
async function exportVariables(session: Environment, vars: Readonly<Record<string, string>>): Promise<void> {
  const names = Object.keys(vars);
  if (names.length === 0) return;
  const script = names.map((name) => `export ${name}=${shellQuote(vars[name]!)}\n`).join("");
  const result = await session.execute("source /dev/stdin", { stdin: script, timeoutMs: 30_000 });
  if (result.exitCode !== 0)
    // Not the output: it could show a value.
    throw new E2bError(500, `Could not set envVars in the new sandbox: the shell exited ${result.exitCode}`);
}

/** Who commands run as in the session's backend (serve's user on local, the container's elsewhere). */
async function userOf(session: Environment): Promise<string> {
  const result = await session.execute("id -un", { isolated: true, timeoutMs: 10_000 }).catch(() => undefined);
  const name = result?.exitCode === 0 ? result.output.trim() : "";
  return /^[A-Za-z0-9._-]+$/.test(name) ? name : "user";
}
