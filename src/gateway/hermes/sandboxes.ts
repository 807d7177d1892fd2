/**
 * hermes' sandboxes: each is a Shellwright session of the gateway's
 * registry (its id is the session's), opened, and so initialised, when the
 * sandbox is created: from then on every exec runs in that one shell state,
 * so a `cd`, an `export`, a function or an alias carries over to the next
 * exec as hermes' client expects (it sends commands raw and leaves the state
 * to the gateway).
 */

import { posix } from "node:path";
import { HttpError } from "../http.js";
import type { RouteContext } from "../routes.js";
import { ExecTable } from "./execs.js";
import type { CreateFields } from "./fields.js";

export interface HermesSandbox {
  readonly id: string;
  /**
   * The directory the sandbox started in. hermes' client sends it as every
   * exec's cwd (its own `cwd` never moves: the gateway owns it), so an exec
   * naming it runs where the session is now, after any `cd`.
   */
  readonly startCwd: string;
  readonly idempotencyKey: string | undefined;
  readonly execs: ExecTable;
}

export interface Created {
  sandbox: HermesSandbox;
  /** False when an earlier create with the same idempotency key made it. */
  created: boolean;
  warnings: string[];
}

interface KeyEntry {
  readonly fingerprint: string;
  readonly sandbox: Promise<Created>;
}

export class SandboxTable {
  readonly #ctx: RouteContext;
  readonly #sandboxes = new Map<string, HermesSandbox>();
  readonly #keys = new Map<string, KeyEntry>();

  constructor(ctx: RouteContext) {
    this.#ctx = ctx;
  }

  /**
   * Opens a sandbox, or gives the one an earlier create with the same
   * idempotency key opened (waiting for it when that create is still under
   * way): a client retrying a create that timed out gets one sandbox, not two.
   */
  async create(fields: CreateFields, idempotencyKey: string | undefined): Promise<Created> {
    this.#forgetClosed();
    if (idempotencyKey === undefined) return this.#open(fields, undefined);
    const earlier = this.#keys.get(idempotencyKey);
    if (earlier !== undefined) {
      if (earlier.fingerprint !== fields.fingerprint)
        throw new HttpError(
          409,
          "INVALID_OPTION",
          "x-idempotency-key was already used for a create with a different body; send a new key for a different sandbox",
          { option: "x-idempotency-key" },
        );
      const made = await earlier.sandbox;
      this.get(made.sandbox.id); // a 404 when it has been terminated since
      return { ...made, created: false };
    }
    const opening = this.#open(fields, idempotencyKey);
    this.#keys.set(idempotencyKey, { fingerprint: fields.fingerprint, sandbox: opening });
    // A create that failed made nothing: a retry with the same key tries again.
    opening.catch(() => this.#keys.delete(idempotencyKey));
    return opening;
  }

  async #open(fields: CreateFields, idempotencyKey: string | undefined): Promise<Created> {
    const ctx = this.#ctx;
    const cwd = fields.cwd === undefined ? undefined : ctx.paths.check("cwd", fields.cwd);
    const warnings: string[] = [];
    const info = await ctx.registry.create(() =>
      ctx.openSession(cwd === undefined ? {} : { cwd }, (message) => warnings.push(message)),
    );
    const sandbox: HermesSandbox = {
      id: info.id,
      startCwd: cwd ?? info.cwd,
      idempotencyKey,
      execs: new ExecTable(ctx, info.id),
    };
    this.#sandboxes.set(info.id, sandbox);
    return { sandbox, created: true, warnings };
  }

  /** The sandbox, or a 404 when it never existed here or its session has been closed (terminated, reaped idle). */
  get(id: string): HermesSandbox {
    const sandbox = this.#sandboxes.get(id);
    if (sandbox !== undefined && this.#sessionOpen(id)) return sandbox;
    if (sandbox !== undefined) this.#forget(sandbox);
    throw new HttpError(
      404,
      "SESSION_NOT_FOUND",
      `No sandbox ${JSON.stringify(id)} on this gateway: it was terminated, closed after the gateway's idle timeout, or the gateway restarted; create a new one`,
    );
  }

  /** The cwd an exec runs in: none of its own (the session's) when it names the sandbox's start directory. */
  execCwd(sandbox: HermesSandbox, cwd: string | undefined): string | undefined {
    if (cwd === undefined || posix.resolve(cwd) === sandbox.startCwd) return undefined;
    return this.#ctx.paths.check("cwd", cwd);
  }

  /** Interrupts what runs in it (each command's whole tree) and closes its session: nothing of it is left. */
  async terminate(id: string): Promise<void> {
    const sandbox = this.get(id);
    this.#forget(sandbox);
    // In the same tick as the lookup: a start whose body arrives while this waits is refused, not left running.
    const running = sandbox.execs.close();
    await Promise.all(running.map((exec) => exec.ended));
    await this.#ctx.registry.close(id);
  }

  #forget(sandbox: HermesSandbox): void {
    this.#sandboxes.delete(sandbox.id);
    if (sandbox.idempotencyKey !== undefined) this.#keys.delete(sandbox.idempotencyKey);
  }

  #sessionOpen(id: string): boolean {
    try {
      this.#ctx.registry.info(id);
      return true;
    } catch {
      return false;
    }
  }

  /** Drops the sandboxes whose sessions were closed another way (idle, DELETE /v1/sessions/{id}), so none piles up. */
  #forgetClosed(): void {
    for (const sandbox of [...this.#sandboxes.values()]) if (!this.#sessionOpen(sandbox.id)) this.#forget(sandbox);
  }
}
