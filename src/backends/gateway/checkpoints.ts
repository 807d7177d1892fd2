/**
 * Checkpoints of a gateway session: the server's session takes them on its
 * own backend (its routes: src/gateway/checkpoint-routes.ts), so this side
 * only names them. The session's own bookkeeping (ids, order, the rule
 * beside commands) stays the one every session has (core/branches.ts); the
 * server's ids are its own, kept here beside the session's.
 */

import type { CheckpointHost, CheckpointSupport } from "../../core/checkpoint-support.js";
import type { FilesystemSnapshot, WorkspaceCopy } from "../../core/checkpoint.js";
import type { Environment } from "../../core/environment.js";
import { CheckpointError } from "../../core/errors.js";
import type { CheckpointInfo, ForkResponse, SessionInfo } from "../../http/gateway-protocol.js";

/** One JSON request to the gateway, with the client's error mapping (environment.ts). */
export type GatewayRequest = <T>(
  method: string,
  path: string,
  body: unknown,
  options: { timeoutMs?: number; signal?: AbortSignal; idempotent?: boolean },
) => Promise<T>;

/** A checkpoint copies the workspace on the server: allow for a large one beyond a control request's limit. */
const COPY_ALLOWANCE_MS = 300_000;

export class GatewayCheckpoints implements CheckpointSupport {
  readonly workspaceRoot: string | undefined;
  readonly #request: GatewayRequest;
  readonly #session: string;
  readonly #timeoutMs: number;
  readonly #attach: (info: SessionInfo) => Environment;
  /** The session's checkpoint ids → the server's. */
  readonly #serverIds = new Map<string, string>();

  constructor(options: {
    request: GatewayRequest;
    info: SessionInfo;
    requestTimeoutMs: number;
    /** A client for a child the server forked. */
    attach: (info: SessionInfo) => Environment;
  }) {
    this.#request = options.request;
    this.#session = `/sessions/${encodeURIComponent(options.info.id)}`;
    this.workspaceRoot = options.info.workspaceRoot;
    this.#timeoutMs = options.requestTimeoutMs + COPY_ALLOWANCE_MS;
    this.#attach = options.attach;
  }

  async save(
    _host: CheckpointHost,
    id: string,
    signal: AbortSignal | undefined,
  ): Promise<WorkspaceCopy | { filesystem: FilesystemSnapshot } | undefined> {
    const { checkpoint } = await this.#send<{ checkpoint: CheckpointInfo }>(
      "POST",
      `${this.#session}/checkpoints`,
      {},
      signal,
    );
    this.#serverIds.set(id, checkpoint.id);
    const { workspace, filesystem } = checkpoint.holds;
    return workspace ?? (filesystem === undefined ? undefined : { filesystem });
  }

  async restore(_host: CheckpointHost, id: string, signal: AbortSignal | undefined): Promise<void> {
    await this.#send("POST", `${this.#at(id)}/rollback`, {}, signal);
  }

  async release(id: string): Promise<void> {
    await this.#request("DELETE", this.#at(id), undefined, { idempotent: true });
    this.#serverIds.delete(id);
  }

  async fork(host: CheckpointHost, signal: AbortSignal | undefined): Promise<Environment> {
    const [child] = await this.forkMany(host, 1, signal);
    return child!;
  }

  /** One request for all: the server forks its session `count` times (all or none) and this attaches to each. */
  async forkMany(_host: CheckpointHost, count: number, signal: AbortSignal | undefined): Promise<Environment[]> {
    const { sessions } = await this.#send<ForkResponse>("POST", `${this.#session}/fork`, { count }, signal);
    if (sessions.length !== count)
      throw new CheckpointError("failed", `The gateway answered a fork of ${count} with ${sessions.length} sessions`);
    return sessions.map((child) => this.#attach(child));
  }

  /** The server releases a session's checkpoints when it closes the session. */
  async close(): Promise<void> {
    this.#serverIds.clear();
  }

  #at(id: string): string {
    const serverId = this.#serverIds.get(id);
    if (serverId === undefined) throw new CheckpointError("not_found", `Checkpoint ${id} is not known to the gateway`);
    return `${this.#session}/checkpoints/${encodeURIComponent(serverId)}`;
  }

  /** A request the caller may abort: cut short, it is an aborted checkpoint (the server stops it too), not a lost gateway. */
  async #send<T>(method: string, path: string, body: unknown, signal: AbortSignal | undefined): Promise<T> {
    try {
      return await this.#request<T>(method, path, body, {
        timeoutMs: this.#timeoutMs,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (signal?.aborted === true && !(error instanceof CheckpointError))
        throw new CheckpointError(
          "aborted",
          "Aborted: the request to the gateway was cut short, which stops the operation there; a rollback already swapped in (or a checkpoint already taken) stays done, and the session's next call reports its cwd",
          {
            cause: error,
            backend: "gateway",
          },
        );
      throw error;
    }
  }
}
