/**
 * The gateway backend: a session hosted by `shellwright serve`, reached over
 * HTTP. The server runs the whole session model (snapshot, cwd, timeouts,
 * kills) on its own backend, so this is not a Transport: it implements the
 * Environment contract directly (the shared bookkeeping comes from
 * EnvironmentBase) and forwards execute() to the server.
 *
 * Retries are limited to what cannot run a command twice: a refused
 * connection (nothing reached the server), a reused keep-alive socket the
 * server had already closed (the request was never read), and a 429 from a
 * gateway that is at its execution limit (it ran nothing).
 */

import { randomBytes } from "node:crypto";
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import {
  checkPort,
  type ExecuteOptions,
  type ExecuteResult,
  type PortUrl,
  type SessionState,
} from "../../core/environment.js";
import { EnvironmentBase, type HostTraits } from "../../core/environment-base.js";
import { GatewayCheckpoints } from "./checkpoints.js";
import {
  BackendUnavailableError,
  InvalidOptionError,
  SessionClosedError,
  UnsupportedError,
} from "../../core/errors.js";
import { connectionLost, gatewayError } from "./client-errors.js";
import { readStream, StreamedOutput } from "./stream-events.js";
import {
  API_PREFIX,
  NDJSON,
  type CreateSessionRequest,
  type CreateSessionResponse,
  type ErrorBody,
  type ExecuteRequest,
  type ExecutionResult,
  type SessionInfo,
} from "../../http/gateway-protocol.js";
import { installHelperThroughExecute } from "../shared/helper-install.js";

export interface GatewayClientOptions {
  /** Base URL of the gateway, e.g. http://127.0.0.1:7420 */
  url: URL;
  token: string | undefined;
  /** How long to keep retrying a refused connection. */
  connectRetryMs: number;
  /** Limit for a control request (create, close, cancel); an execution gets its own timeout on top. */
  requestTimeoutMs: number;
  /** How long an execution waits while the gateway answers 429 (at its limit of executions). */
  busyTimeoutMs: number;
  /** The session's default command timeout and kill grace, to know when an answer is overdue. */
  timeoutMs: number;
  killGraceMs: number;
  /** Bounds on streamed output kept client-side (used only when the answer is lost after an interrupt). */
  maxOutputBytes: number;
  outputHeadFraction: number;
  warn: (message: string) => void;
  /** What the tools mask: the client's own `secrets` and secret-looking `env` values (the gateway's config is not known here). */
  secretValues?: readonly string[];
}

// With a timeout set, Node closes an idle kept-alive socket 1 s before the
// server's announced Keep-Alive timeout would, which avoids most resets.
const agents = {
  http: new HttpAgent({ keepAlive: true, timeout: 60_000 }),
  https: new HttpsAgent({ keepAlive: true, timeout: 60_000 }),
};
/** The server gives up on a killed command 5 s after SIGKILL; allow for that before calling an answer overdue. */
const SERVER_GIVE_UP_MS = 5000;
const CANCEL_RETRY_MS = 50;

export class GatewayEnvironment extends EnvironmentBase {
  readonly backend = "gateway";
  readonly #client: GatewayClient;
  readonly #options: GatewayClientOptions;
  /** The gateway is older than `longLived` and refused it: such a gateway counts every execution alike. */
  #sendsLongLived = true;

  readonly #checkpoints: GatewayCheckpoints;

  private constructor(client: GatewayClient, options: GatewayClientOptions, info: SessionInfo) {
    super(
      { sessionId: info.id, cwd: info.cwd, snapshotReady: info.snapshotReady },
      info.paths,
      options.timeoutMs,
      options.secretValues,
      installHelperThroughExecute,
    );
    this.#client = client;
    this.#options = options;
    this.#checkpoints = new GatewayCheckpoints({
      request: (method, path, body, sendOptions) => client.json(method, path, body, sendOptions),
      info,
      requestTimeoutMs: options.requestTimeoutMs,
      // A fork's child is a session of the gateway's own: a client of its own attaches to it.
      attach: (child) => new GatewayEnvironment(new GatewayClient(options), options, child),
    });
  }

  protected override host(): HostTraits {
    return { checkpoints: this.#checkpoints };
  }

  /** Creates a session on the gateway, or reattaches to one (`resume`). */
  static async open(
    options: GatewayClientOptions,
    request: CreateSessionRequest,
    resume?: SessionState,
  ): Promise<GatewayEnvironment> {
    const client = new GatewayClient(options);
    if (resume !== undefined) {
      const info = await client.json<SessionInfo>("GET", `/sessions/${resume.sessionId}`, undefined, {
        idempotent: true,
      });
      return new GatewayEnvironment(client, options, info);
    }
    const initTimeoutMs = request.initTimeoutMs ?? 30_000;
    const info = await client.json<CreateSessionResponse>("POST", "/sessions", request, {
      timeoutMs: options.requestTimeoutMs + initTimeoutMs,
    });
    for (const warning of info.warnings) options.warn(warning);
    return new GatewayEnvironment(client, options, info);
  }

  /** The port is on the server's backend, which the gateway's API does not forward (docs/sdk.md). */
  async portUrl(port: number): Promise<PortUrl> {
    throw new UnsupportedError(
      `No URL for port ${checkPort(port)}: the gateway forwards commands, not ports; the port is on the gateway server's backend (reach it from there, or forward it, e.g. ssh -L)`,
      { backend: this.backend },
    );
  }

  async execute(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    const started = performance.now();
    const checked = this.checkExecute(command, options);
    const { cwd, timeoutMs, stdin, signal, isolated, longLived, separateStreams } = checked;
    // What was streamed, bounded like any output, for when the answer itself is lost.
    const streamed = new StreamedOutput(this.#options, checked);
    const interrupted = (): ExecuteResult => ({
      ...streamed.interrupted(),
      cwd: this.cwd,
      durationMs: Math.round(performance.now() - started),
    });
    if (signal?.aborted) return interrupted();

    const executionId = randomBytes(8).toString("hex");
    const body: ExecuteRequest = { command, executionId, timeoutMs, stream: streamed.wanted };
    if (cwd !== undefined) body.cwd = cwd;
    if (isolated) body.isolated = true;
    if (longLived && this.#sendsLongLived) body.longLived = true;
    if (separateStreams) body.separateStreams = true;
    if (stdin !== undefined && stdin.length > 0) body.stdinBase64 = Buffer.from(stdin).toString("base64");

    const path = `/sessions/${this.id}/executions`;
    // Capped at the longest timer Node can set: a "forever" timeout plus the margins overflows it.
    const deadlineMs = Math.min(
      timeoutMs + this.#options.killGraceMs + SERVER_GIVE_UP_MS + this.#options.requestTimeoutMs,
      2 ** 31 - 1,
    );
    const busyUntil = Date.now() + this.#options.busyTimeoutMs;
    for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
      if (signal?.aborted) return interrupted();
      // Cancelling goes through the cancel endpoint, so the answer still comes
      // back with the partial output; `lost` cuts the request if that fails.
      const lost = new AbortController();
      const stopCancelling = new AbortController();
      const onAbort = (): void =>
        void this.#client.cancel(path, executionId, stopCancelling.signal).catch(() => lost.abort());
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        const response = await this.#client.send("POST", path, body, {
          timeoutMs: deadlineMs,
          signal: lost.signal,
          // A kept-alive socket the gateway had closed: resend only if the gateway never saw this execution.
          unseen: async () => {
            const probe = await this.#client.send("GET", `${path}/${executionId}`, undefined, { idempotent: true });
            probe.resume();
            return probe.statusCode === 404;
          },
        });
        // Only a 429 with a retry hint clears soon (executions in flight); a long-lived bound does not.
        if (
          response.statusCode === 429 &&
          response.headers["retry-after"] !== undefined &&
          Date.now() + wait < busyUntil
        ) {
          response.resume();
          await sleep(wait + Math.random() * wait);
          continue;
        }
        let result: ExecutionResult;
        if (response.statusCode === 200 && body.stream) {
          result = await readStream(response, this.#options.url, (text, stream) => streamed.push(text, stream));
        } else if (response.statusCode === 400 && body.longLived === true) {
          try {
            result = await this.#client.answer<ExecutionResult>(response);
          } catch (error) {
            // Refused before anything ran (a 400 comes before the execution starts): send it again without.
            if (!(error instanceof InvalidOptionError && error.option === "longLived")) throw error;
            this.#sendsLongLived = false;
            delete body.longLived;
            continue;
          }
        } else {
          result = await this.#client.answer<ExecutionResult>(response);
        }
        this.setCwd(result.cwd);
        return {
          output: result.output,
          exitCode: result.exitCode,
          cwd: result.cwd,
          timedOut: result.timedOut,
          interrupted: result.interrupted,
          truncated: result.truncated,
          durationMs: Math.round(performance.now() - started),
          ...(separateStreams ? { stdout: result.stdout ?? "", stderr: result.stderr ?? "" } : {}),
        };
      } catch (error) {
        // Interrupted and then cut off: the gateway kills a command whose client went away.
        if (signal?.aborted && error instanceof BackendUnavailableError) return interrupted();
        if (error instanceof SessionClosedError) this.markClosed();
        throw error;
      } finally {
        stopCancelling.abort();
        signal?.removeEventListener("abort", onAbort);
      }
    }
  }

  /** Closes the session on the gateway. A gateway that cannot be reached is not an error here: it reaps idle sessions itself. */
  protected override async shutdown(): Promise<void> {
    try {
      await this.#client.json("DELETE", `/sessions/${this.id}`, undefined, { idempotent: true });
    } catch (error) {
      if (error instanceof SessionClosedError || error instanceof BackendUnavailableError) return;
      throw error;
    }
  }
}

interface SendOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Safe to resend after a connection reset (GET, DELETE, cancel). */
  idempotent?: boolean;
  /**
   * For a request that is not idempotent: asks the server whether it saw the
   * request, to resend only if not. Its own error (a gateway that is down) is the one thrown.
   */
  unseen?: () => Promise<boolean>;
}

/** HTTP with the gateway's error mapping and the retries that cannot run a command twice. */
class GatewayClient {
  readonly #options: GatewayClientOptions;

  constructor(options: GatewayClientOptions) {
    this.#options = options;
  }

  async json<T>(method: string, path: string, body: unknown, options: SendOptions = {}): Promise<T> {
    return this.answer<T>(await this.send(method, path, body, options));
  }

  /** Sends until a response comes, retrying only what is safe to retry. */
  async send(method: string, path: string, body: unknown, options: SendOptions = {}): Promise<IncomingMessage> {
    const giveUpAt = Date.now() + this.#options.connectRetryMs;
    for (let wait = 25; ; wait = Math.min(wait * 2, 400)) {
      try {
        return await this.#sendOnce(method, path, body, options);
      } catch (error) {
        const failure = error as Error & { code?: string; reusedSocket?: boolean };
        const refused = failure.code === "ECONNREFUSED" || failure.code === "EAI_AGAIN";
        const staleSocket =
          failure.reusedSocket === true && (failure.code === "ECONNRESET" || failure.code === "EPIPE");
        let resendable = options.idempotent === true;
        if (!resendable && staleSocket && options.unseen !== undefined) {
          try {
            resendable = await options.unseen();
          } catch (probeError) {
            const probeCause = (probeError as Error).cause as Error & { code?: string };
            throw new BackendUnavailableError(
              `The gateway at ${this.#options.url.origin} cannot be reached: the connection was lost mid-request, and then ${why(probeCause ?? (probeError as Error))}; if the command had started, its outcome is unknown`,
              { cause: failure, backend: "gateway" },
            );
          }
        }
        const retryable = refused || (resendable && (staleSocket || failure.code === "ECONNRESET"));
        if (options.signal?.aborted || !retryable || (!staleSocket && Date.now() + wait > giveUpAt))
          throw this.#unreachable(failure);
        if (!staleSocket) await sleep(wait);
      }
    }
  }

  /** Asks the gateway to interrupt an execution, until it has (an early cancel can beat the execution there). */
  async cancel(path: string, executionId: string, stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      const response = await this.send("POST", `${path}/${executionId}/cancel`, {}, { idempotent: true, signal: stop });
      response.resume();
      if (response.statusCode !== 404) return;
      await sleep(CANCEL_RETRY_MS);
    }
  }

  /** The JSON of a 2xx answer; any other status becomes the matching typed error. */
  async answer<T>(response: IncomingMessage): Promise<T> {
    const text = await readAll(response, this.#options.url);
    const status = response.statusCode ?? 0;
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      throw new BackendUnavailableError(
        `The gateway at ${this.#options.url.origin} answered ${status} with a body that is not JSON; is it a Shellwright gateway?`,
        { backend: "gateway" },
      );
    }
    if (status >= 200 && status < 300) return parsed as T;
    throw gatewayError(status, (parsed as ErrorBody | undefined)?.error, this.#options.url);
  }

  #sendOnce(method: string, path: string, body: unknown, options: SendOptions): Promise<IncomingMessage> {
    const { url } = this.#options;
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = { accept: `application/json, ${NDJSON}` };
    if (this.#options.token !== undefined) headers.authorization = `Bearer ${this.#options.token}`;
    if (payload !== undefined)
      Object.assign(headers, { "content-type": "application/json", "content-length": payload.length });
    const secure = url.protocol === "https:";
    return new Promise((resolve, reject) => {
      const req = (secure ? httpsRequest : httpRequest)(
        {
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port,
          method,
          path: `${url.pathname.replace(/\/$/, "")}${API_PREFIX}${path}`,
          headers,
          agent: secure ? agents.https : agents.http,
        },
        resolve,
      );
      const fail = (error: Error & { code?: string; reusedSocket?: boolean }): void => {
        error.reusedSocket = req.reusedSocket;
        reject(error);
      };
      req.once("error", fail);
      if (options.timeoutMs !== undefined) {
        req.setTimeout(options.timeoutMs, () =>
          req.destroy(Object.assign(new Error(`no answer within ${options.timeoutMs} ms`), { code: "ETIMEDOUT" })),
        );
      }
      const onAbort = (): void =>
        void req.destroy(Object.assign(new Error("request cancelled"), { code: "ABORT_ERR" }));
      options.signal?.addEventListener("abort", onAbort, { once: true });
      req.once("close", () => options.signal?.removeEventListener("abort", onAbort));
      req.end(payload);
    });
  }

  #unreachable(error: Error & { code?: string }): BackendUnavailableError {
    return new BackendUnavailableError(`The gateway at ${this.#options.url.origin} cannot be reached: ${why(error)}`, {
      cause: error,
      backend: "gateway",
    });
  }
}

function why(error: Error & { code?: string }): string {
  if (error.code === "ECONNREFUSED") return "nothing listens there (is `shellwright serve` running?)";
  if (error.code === "ETIMEDOUT") return `it did not answer in time (${error.message})`;
  if (error.code === "ECONNRESET" || error.message === "socket hang up") {
    return "the connection was lost mid-request (the gateway stopped or restarted); the command's outcome is unknown";
  }
  return `${error.code ?? "error"}: ${error.message}`;
}

async function readAll(response: IncomingMessage, url: URL): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) chunks.push(chunk);
  } catch (error) {
    throw connectionLost(error, url);
  }
  if (!response.complete) throw connectionLost(undefined, url);
  return Buffer.concat(chunks).toString("utf8");
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
