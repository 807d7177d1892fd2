/**
 * startGateway(options): the `shellwright serve` HTTP server, on node:http.
 *
 * node:http rather than a framework: the API is eight routes, and what
 * matters here (streaming with backpressure, noticing a client that hangs up
 * mid-command, stopping a body at its limit, answering before reading a body)
 * is plain node:http either way; no dependency is one less thing to audit on a
 * server that runs shell commands.
 */

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  backendOf,
  BACKENDS,
  createEnvironment,
  DEFAULT_BACKEND,
  withOutputCap,
  type EnvironmentConfig,
} from "../backends/index.js";
import { InvalidOptionError } from "../core/errors.js";
import {
  describe,
  optionalPositiveInteger,
  plainObject,
  positiveInteger,
  positiveNumber,
  rejectUnknown,
} from "../core/options.js";
import { TokenMask } from "./token-mask.js";
import { checkTokenOption, MIN_TOKEN_LENGTH, TokenCheck } from "../http/bearer-token.js";
import { hostHeaderCheck } from "../http/host-header.js";
import { canonicalHost, isLoopbackHost } from "../http/loopback.js";
import { PathPolicy } from "./paths.js";
import { DEFAULT_GATEWAY_PORT, type CreateSessionRequest } from "../http/gateway-protocol.js";
import { SessionRegistry } from "./sessions.js";
import type { RouteContext } from "./routes.js";
import { apiNames, servedApis, type ApiName } from "./apis.js";
import { HttpError, sendError } from "./http.js";
import { createEnvironmentPool } from "../pool/create-pool.js";
import { MAX_POOL_SIZE } from "../pool/options.js";
import type { EnvironmentPool } from "../pool/pool.js";
import { writeStderr } from "../core/stderr.js";

export interface GatewayOptions {
  /** The backend every session runs on, as for createEnvironment. Requests cannot change it. @default { backend: "local" } */
  backend?: EnvironmentConfig;
  /** The bearer token clients must send; required unless insecureNoAuth. */
  token?: string;
  /** Serve without a token: allowed only on a loopback address. */
  insecureNoAuth?: boolean;
  /** @default "127.0.0.1" */
  host?: string;
  /** 0 picks a free port. @default 7420 */
  port?: number;
  /** Directories a request may name as a cwd (inside the backend). @default [the default cwd] */
  allowedRoots?: string[];
  /** A new session's cwd when the request names none. @default the first allowed root, else this process's cwd */
  cwd?: string;
  /** @default 8 MiB */
  maxBodyBytes?: number;
  /** @default 64 */
  maxSessions?: number;
  /** Executions in flight across all sessions; long-lived ones (background processes' followers) are not counted. @default 32 */
  maxConcurrentExecutions?: number;
  /** Long-lived executions (a background process's or PTY's output follower or end watcher) one session may run. @default 128 */
  maxLongLivedPerSession?: number;
  /** Long-lived executions across all sessions. @default 512 */
  maxLongLivedExecutions?: number;
  /** A session with nothing running for this long is closed. @default 1 800 000 (30 min) */
  idleTimeoutMs?: number;
  /**
   * Sessions kept opened ahead (docs/pools.md): a create request that names
   * nothing of its own (no cwd but the default, no env, no limits) gets one
   * of them. Members are the server's, not counted in maxSessions until handed out.
   * @default none
   */
  poolSize?: number;
  /**
   * The HTTP APIs served on the port: `shellwright` (docs/gateway.md) and, when asked, other clients'
   * APIs (each claims its own paths).
   * @default ["shellwright"]
   */
  apis?: ApiName[];
  /** @default writes to stderr */
  log?: (message: string) => void;
}

export interface Gateway {
  /** Base URL, e.g. http://127.0.0.1:7420 */
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  readonly registry: SessionRegistry;
  /** The sessions kept opened ahead, when poolSize was given. */
  readonly pool: EnvironmentPool | undefined;
  /** Refuses new requests, stops running commands (their clients get 503), closes every session. */
  close(): Promise<void>;
}

/** Per-session output kept in memory is capped so one request cannot take the server's memory. */
const MAX_OUTPUT_BYTES_CAP = 16 * 1024 * 1024;
/** On close, how long answers in flight get before connections are cut. */
const CLOSE_FLUSH_MS = 2000;

const KNOWN = [
  "backend",
  "token",
  "insecureNoAuth",
  "host",
  "port",
  "allowedRoots",
  "cwd",
  "maxBodyBytes",
  "maxSessions",
  "maxConcurrentExecutions",
  "maxLongLivedPerSession",
  "maxLongLivedExecutions",
  "idleTimeoutMs",
  "poolSize",
  "apis",
  "log",
];

export async function startGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const raw = plainObject("options", options);
  rejectUnknown("gateway", raw, KNOWN);
  const backend = { ...plainObject("backend", options.backend ?? { backend: DEFAULT_BACKEND }) } as EnvironmentConfig &
    Record<string, unknown>;
  const chosen = backendOf(backend);
  if (chosen === undefined) {
    throw new InvalidOptionError(
      "backend.backend",
      `Unknown backend ${describe(backend.backend)}; available: ${BACKENDS.join(", ")}`,
    );
  }
  const apis = apiNames(options.apis);
  const host = options.host ?? "127.0.0.1";
  if (typeof host !== "string" || host === "")
    throw new InvalidOptionError("host", `host must be a non-empty string, got ${describe(host)}`);
  const port = options.port ?? DEFAULT_GATEWAY_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new InvalidOptionError("port", `port must be an integer from 0 to 65535, got ${describe(port)}`);

  let auth: TokenCheck | undefined;
  if (options.insecureNoAuth === true) {
    if (options.token !== undefined)
      throw new InvalidOptionError("insecureNoAuth", "Give either a token or insecureNoAuth, not both");
    if (!isLoopbackHost(host))
      throw new InvalidOptionError(
        "insecureNoAuth",
        `insecureNoAuth is allowed only on a loopback address, not on host ${describe(host)}`,
      );
  } else {
    if (options.token === undefined) {
      throw new InvalidOptionError(
        "token",
        `The gateway needs a bearer token of at least ${MIN_TOKEN_LENGTH} characters (or insecureNoAuth on loopback), got none`,
      );
    }
    auth = new TokenCheck(checkTokenOption("token", options.token));
  }

  const defaultCwd = options.cwd ?? options.allowedRoots?.[0] ?? process.cwd();
  const roots = options.allowedRoots ?? [defaultCwd];
  if (!Array.isArray(roots) || roots.some((r) => typeof r !== "string"))
    throw new InvalidOptionError(
      "allowedRoots",
      `allowedRoots must be an array of absolute paths, got ${describe(roots)}`,
    );
  let paths: PathPolicy;
  try {
    paths = new PathPolicy(roots, chosen.sharesHostFiles);
    paths.check("cwd", defaultCwd);
  } catch (error) {
    throw new InvalidOptionError(error instanceof TypeError ? "allowedRoots" : "cwd", (error as Error).message);
  }
  // This machine's paths and sandbox, checked before the server listens: a session that cannot open fails
  // only when a client asks for one.
  await chosen.checkStart?.({
    cwd: defaultCwd,
    sandbox: backend.sandbox,
    dirs: (options.allowedRoots ?? []).map((path) => ({ option: "allowedRoots", path })),
  });

  const log = options.log ?? ((message: string) => writeStderr(`shellwright serve: ${message}\n`));
  const poolSize = optionalPositiveInteger("poolSize", options.poolSize);
  if (poolSize !== undefined && poolSize > MAX_POOL_SIZE)
    throw new InvalidOptionError("poolSize", `poolSize must be at most ${MAX_POOL_SIZE}, got ${describe(poolSize)}`);
  const registry = new SessionRegistry({
    maxSessions: positiveInteger("maxSessions", options.maxSessions, 64),
    maxConcurrentExecutions: positiveInteger("maxConcurrentExecutions", options.maxConcurrentExecutions, 32),
    maxLongLivedPerSession: positiveInteger("maxLongLivedPerSession", options.maxLongLivedPerSession, 128),
    maxLongLivedExecutions: positiveInteger("maxLongLivedExecutions", options.maxLongLivedExecutions, 512),
    idleTimeoutMs: positiveNumber("idleTimeoutMs", options.idleTimeoutMs, 30 * 60_000),
  });

  const context: RouteContext = {
    registry,
    auth,
    hostAllowed: hostHeaderCheck(host),
    paths,
    maxBodyBytes: positiveInteger("maxBodyBytes", options.maxBodyBytes, 8 * 1024 * 1024),
    log,
    tokenMask: options.token === undefined ? undefined : new TokenMask(options.token),
    openSession: (request: CreateSessionRequest, onWarning) => {
      if (pool !== undefined && pooledRequest(request, defaultCwd)) return pool.acquire();
      for (const key of ["maxOutputBytes", "maxOutputChars"] as const) {
        const value = request[key];
        if (typeof value === "number" && value > MAX_OUTPUT_BYTES_CAP)
          throw new InvalidOptionError(
            key,
            `${key} may be at most ${MAX_OUTPUT_BYTES_CAP} on this gateway, got ${value}`,
          );
      }
      const { env, maxOutputChars, ...chosen } = request;
      // A client's cap (either spelling; an older client sends maxOutputChars) replaces the gateway's own.
      const rest = { ...chosen, maxOutputBytes: chosen.maxOutputBytes ?? maxOutputChars };
      if (rest.maxOutputBytes === undefined) delete rest.maxOutputBytes;
      // Anything but an object goes on as given, for the backend's validation to name it
      // (spreading a string would turn it into variables named 0, 1, 2, …).
      const merged =
        env === undefined
          ? {}
          : typeof env !== "object" || env === null || Array.isArray(env)
            ? { env }
            : { env: { ...(backend as { env?: Record<string, string> }).env, ...env } };
      return createEnvironment({
        ...withOutputCap(backend, rest.maxOutputBytes),
        ...rest,
        ...merged,
        cwd: request.cwd ?? defaultCwd,
        onWarning,
      } as EnvironmentConfig);
    },
  };

  // Opened before the server listens: a backend the pool cannot use fails startGateway, with its error.
  const pool =
    poolSize === undefined
      ? undefined
      : await createEnvironmentPool({ ...backend, cwd: defaultCwd, onWarning: log } as EnvironmentConfig, {
          size: poolSize,
          onWarning: log,
        });

  const served = servedApis(apis, context);
  let inFlight = 0;
  const server = createServer((req, res) => {
    inFlight++;
    res.once("close", () => inFlight--);
    const pathname = pathOf(req.url);
    const api = served.find((candidate) => candidate.claims(req, pathname));
    if (api !== undefined) void api.handle(req, res);
    else sendError(res, new HttpError(404, "NOT_FOUND", "No route here"), { connection: "close" });
  });
  // Bound how long a slow client may take to send its request (it cannot hold a
  // connection open for free); a long-running answer is not affected.
  server.headersTimeout = 30_000;
  server.requestTimeout = 60_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, canonicalHost(host), () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    await pool?.close();
    throw error;
  }
  const address = server.address() as AddressInfo;
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${address.port}`,
    port: address.port,
    server,
    registry,
    pool,
    close: () =>
      (closing ??= (async () => {
        server.close();
        server.closeIdleConnections();
        await Promise.all(served.map((api) => api.close?.()));
        await registry.shutdown();
        await pool?.close();
        const deadline = Date.now() + CLOSE_FLUSH_MS;
        while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        server.closeAllConnections();
      })()),
  };
}

/** A request a warm member can serve: it asks for nothing the server's config did not open the member with. */
function pooledRequest(request: CreateSessionRequest, defaultCwd: string): boolean {
  return Object.entries(request).every(
    ([key, value]) => value === undefined || (key === "cwd" && value === defaultCwd),
  );
}

/** A request target's path; "" for one that is no URL path (each API answers it with its own 400). */
function pathOf(target: string | undefined): string {
  try {
    return new URL(target ?? "/", "http://gateway").pathname;
  } catch {
    return "";
  }
}
