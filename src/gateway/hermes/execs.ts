/**
 * The execs of one hermes sandbox. hermes' client starts a command, then
 * polls for its end every 0.25 s, and cancels it when the agent is
 * interrupted: so an exec outlives the request that started it, and its
 * result is kept until polled (and a while after, for a retried poll).
 */

import type { ExecuteOptions, ExecuteResult } from "../../core/environment.js";
import { HttpError } from "../http.js";
import type { RouteContext } from "../routes.js";

/** hermes' statuses; the last four are terminal (its client stops polling on them). */
export type ExecStatus = "running" | "completed" | "failed" | "cancelled" | "timeout";

/** What the exec routes answer (hermes reads `status`, `execId`, `output`, `returncode`). */
export interface ExecView {
  execId: string;
  status: ExecStatus;
  output?: string;
  returncode?: number;
}

/** Finished execs a sandbox remembers (a retried poll still finds its result); running ones are always kept. */
const KEPT_FINISHED = 16;

export class Exec {
  readonly execId: string;
  readonly command: string;
  /** Settles (never rejects) when the command has ended and its result is recorded. */
  readonly ended: Promise<void>;
  readonly #controller = new AbortController();
  #view: ExecView;

  constructor(
    execId: string,
    command: string,
    run: (signal: AbortSignal) => Promise<ExecuteResult>,
    ctx: RouteContext,
  ) {
    this.execId = execId;
    this.command = command;
    this.#view = { execId, status: "running" };
    const mask = (text: string): string => ctx.tokenMask?.mask(text) ?? text;
    this.ended = run(this.#controller.signal).then(
      (result) => {
        this.#view = { execId, status: statusOf(result), output: mask(result.output), returncode: result.exitCode };
      },
      (error: unknown) => {
        // Not a result of the command: the session failed under it (a backend error, or terminated meanwhile).
        const message = error instanceof Error ? error.message : String(error);
        this.#view = { execId, status: "failed", output: mask(`Exec failed: ${message}`), returncode: 1 };
      },
    );
  }

  get view(): ExecView {
    return this.#view;
  }

  get running(): boolean {
    return this.#view.status === "running";
  }

  /** Interrupts the command: its whole process tree is killed, and it ends `cancelled` with 130. */
  cancel(): void {
    this.#controller.abort();
  }
}

function statusOf(result: ExecuteResult): ExecStatus {
  if (result.timedOut) return "timeout";
  if (result.interrupted) return "cancelled";
  // The command ran to its end: its exit code (non-zero included) is in returncode.
  return "completed";
}

export class ExecTable {
  readonly #ctx: RouteContext;
  readonly #sessionId: string;
  readonly #execs = new Map<string, Exec>();
  /** Set by the sandbox's terminate, at once: an exec whose start comes later (its body was still on its way) is refused. */
  #closed = false;

  constructor(ctx: RouteContext, sessionId: string) {
    this.#ctx = ctx;
    this.#sessionId = sessionId;
  }

  find(execId: string): Exec | undefined {
    return this.#execs.get(execId);
  }

  /** The exec, or a 404 that says why it may be missing. */
  get(execId: string): Exec {
    const exec = this.#execs.get(execId);
    if (exec === undefined)
      throw new HttpError(
        404,
        "EXECUTION_NOT_FOUND",
        `Sandbox ${this.#sessionId} has no exec ${JSON.stringify(execId)}: it was never started here, or finished long enough ago to be forgotten (a sandbox keeps its last ${KEPT_FINISHED} results)`,
      );
    return exec;
  }

  /**
   * Starts a command in the sandbox's session. The registry claims its slot
   * first, so a full gateway (429), a shut-down one (503) or a resent id it
   * has already run (409) is refused before anything runs.
   */
  start(execId: string, command: string, options: Omit<ExecuteOptions, "signal">): Exec {
    if (this.#closed)
      throw new HttpError(
        404,
        "SESSION_NOT_FOUND",
        `Sandbox ${this.#sessionId} was terminated; exec ${JSON.stringify(execId)} did not run; create a new sandbox`,
      );
    let exec: Exec;
    try {
      exec = new Exec(
        execId,
        command,
        (signal) => this.#ctx.registry.begin(this.#sessionId, execId, signal)(command, options),
        this.#ctx,
      );
    } catch (error) {
      // The registry remembers more ids than this table keeps results: a forgotten exec resent.
      if (error instanceof HttpError && error.code === "DUPLICATE_EXECUTION")
        throw new HttpError(
          409,
          "DUPLICATE_EXECUTION",
          `execId ${JSON.stringify(execId)} already ran in sandbox ${this.#sessionId} (its result is no longer kept); use a new execId`,
          { option: "execId" },
        );
      throw error;
    }
    this.#execs.set(execId, exec);
    void exec.ended.then(() => this.#forgetOld());
    return exec;
  }

  /** Refuses every later start and interrupts what runs; the execs it interrupted. */
  close(): Exec[] {
    this.#closed = true;
    const running = [...this.#execs.values()].filter((exec) => exec.running);
    for (const exec of running) exec.cancel();
    return running;
  }

  #forgetOld(): void {
    const finished = [...this.#execs.values()].filter((exec) => !exec.running);
    for (const exec of finished.slice(0, Math.max(0, finished.length - KEPT_FINISHED))) this.#execs.delete(exec.execId);
  }
}
