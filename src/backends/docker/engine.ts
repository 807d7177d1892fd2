/**
 * The Docker Engine API over its unix socket: only the calls the docker
 * backend makes on every command (exec create, start, inspect). They cost a
 * round trip inside this process instead of starting the `docker` CLI, which
 * bench/docker.mjs measured as the larger share of a `docker exec`.
 */

import http from "node:http";
import type { Duplex } from "node:stream";
import { BackendUnavailableError } from "../../core/errors.js";

/** One call the backend made to the engine: the record a `trace` option receives. */
export type DockerCall = { via: "api"; method: string; path: string; body?: unknown } | { via: "cli"; argv: string[] };

export interface ApiResponse {
  status: number;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
  text: string;
}

/** The socket named by DOCKER_HOST (unix:// only), else the engine's default. */
export function defaultSocketPath(env: NodeJS.ProcessEnv = process.env): string {
  const host = env.DOCKER_HOST;
  if (host?.startsWith("unix://")) return host.slice("unix://".length);
  return "/var/run/docker.sock";
}

/** Generous: a container removal or start can take seconds on a loaded machine. */
const REQUEST_TIMEOUT_MS = 60_000;

export class EngineApi {
  readonly socketPath: string;
  readonly #trace: ((call: DockerCall) => void) | undefined;
  // Keep-alive sockets are unref'd by Node while idle, so they never hold the process open.
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

  constructor(socketPath: string, trace?: (call: DockerCall) => void) {
    this.socketPath = socketPath;
    this.#trace = trace;
  }

  /** One API call; an engine that does not answer within timeoutMs is reported, not waited on forever. */
  request(method: string, path: string, body?: unknown, timeoutMs = REQUEST_TIMEOUT_MS): Promise<ApiResponse> {
    this.#trace?.({ via: "api", method, path, ...(body === undefined ? {} : { body }) });
    const data = body === undefined ? undefined : JSON.stringify(body);
    return new Promise<ApiResponse>((resolve, reject) => {
      const request = http.request(
        {
          socketPath: this.socketPath,
          method,
          path,
          agent: this.#agent,
          headers: data === undefined ? {} : jsonHeaders(data),
          timeout: timeoutMs,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", (error) => reject(this.#unreachable(error)));
          response.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let json: unknown;
            try {
              json = text === "" ? undefined : JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: response.statusCode ?? 0, json, text });
          });
        },
      );
      request.on("error", (error) => reject(this.#unreachable(error)));
      request.on("timeout", () => {
        request.destroy();
        reject(
          new BackendUnavailableError(
            `Docker Engine at ${this.socketPath} did not answer ${method} ${path} within ${timeoutMs / 1000} s; it may be overloaded or stuck (restarting dockerd helps with the latter).`,
            { backend: "docker" },
          ),
        );
      });
      request.end(data);
    });
  }

  /**
   * Starts an exec and hands back the raw connection: the engine's
   * multiplexed output arrives on it, and stdin (when attached) is written to
   * it and ended with a half-close.
   */
  startExec(execId: string): Promise<Duplex> {
    const path = `/exec/${execId}/start`;
    this.#trace?.({ via: "api", method: "POST", path, body: { Detach: false, Tty: false } });
    const data = JSON.stringify({ Detach: false, Tty: false });
    return new Promise<Duplex>((resolve, reject) => {
      // A connection of its own (no agent): the engine takes it over for the stream.
      const request = http.request({
        socketPath: this.socketPath,
        method: "POST",
        path,
        headers: { ...jsonHeaders(data), Connection: "Upgrade", Upgrade: "tcp" },
      });
      request.on("upgrade", (_response, socket, head) => {
        if (head.length > 0) socket.unshift(head);
        resolve(socket);
      });
      request.on("response", (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          reject(new ApiError(response.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"), path));
        });
      });
      request.on("error", (error) => reject(this.#unreachable(error)));
      request.end(data);
    });
  }

  async ping(): Promise<void> {
    const response = await this.request("GET", "/_ping");
    if (response.status !== 200)
      throw new BackendUnavailableError(
        `Docker Engine at ${this.socketPath} answered ${response.status} to /_ping: ${response.text.trim()}`,
        { backend: "docker" },
      );
  }

  close(): void {
    this.#agent.destroy();
  }

  #unreachable(error: Error): BackendUnavailableError {
    return new BackendUnavailableError(
      `Docker Engine is not reachable at ${this.socketPath} (${error.message}); is dockerd running? Set socketPath or DOCKER_HOST=unix://… if it listens elsewhere.`,
      {
        cause: error,
        backend: "docker",
      },
    );
  }
}

/** A non-2xx answer from the engine, with its message. */
export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, body: string, path: string) {
    super(`${path}: ${status} ${engineMessage(body)}`);
    this.status = status;
  }
}

/** The `message` of an engine error body, or the body itself. */
export function engineMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // not JSON
  }
  return body.trim();
}

function jsonHeaders(data: string): Record<string, string | number> {
  return { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(data) };
}

/**
 * Splits the engine's multiplexed stream (8-byte frame headers: stream id,
 * three zero bytes, big-endian payload length) into frames, in order.
 */
export class MultiplexDecoder {
  #pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Array<{ stream: number; payload: Buffer }> {
    let data = this.#pending.length > 0 ? Buffer.concat([this.#pending, chunk]) : chunk;
    const frames: Array<{ stream: number; payload: Buffer }> = [];
    while (data.length >= 8) {
      const size = data.readUInt32BE(4);
      if (data.length < 8 + size) break;
      if (size > 0) frames.push({ stream: data[0]!, payload: data.subarray(8, 8 + size) });
      data = data.subarray(8 + size);
    }
    this.#pending = data;
    return frames;
  }
}
