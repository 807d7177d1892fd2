/**
 * The gateway's routes. Each request is authenticated before its body is
 * read, so a request without the token runs nothing and costs nothing.
 */

import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { normalizeExecuteOptions, type Environment, type ExecuteOptions } from "../core/environment.js";
import { CheckpointError, isShellwrightError } from "../core/errors.js";
import { shellString } from "../core/options.js";
import type { TokenCheck } from "../http/bearer-token.js";
import { HttpError, jsonObject, readJsonBody, sendError, sendJson } from "./http.js";
import type { PathPolicy } from "./paths.js";
import {
  API_PREFIX,
  EXECUTION_ID,
  NDJSON,
  type CreateSessionRequest,
  type CreateSessionResponse,
  type ExecutionResult,
  type StreamEvent,
} from "../http/gateway-protocol.js";
import type { SessionRegistry } from "./sessions.js";
import { checkpointRoute } from "./checkpoint-routes.js";
import { SESSION_KEYS } from "../backends/index.js";
import type { TokenMask } from "./token-mask.js";

export interface RouteContext {
  registry: SessionRegistry;
  /** Undefined only when the server was started with --insecure-no-auth. */
  auth: TokenCheck | undefined;
  /** True for a Host header that names this server (see src/http/host-header.ts). */
  hostAllowed(header: string | undefined): boolean;
  paths: PathPolicy;
  maxBodyBytes: number;
  /** Opens a session on the configured backend with the (validated) request options. */
  openSession(request: CreateSessionRequest, onWarning: (message: string) => void): Promise<Environment>;
  log(message: string): void;
  /** The server's own token, masked in what a session sends back; undefined without a token. */
  tokenMask?: TokenMask | undefined;
}

/**
 * What a client may set when it opens a session: the session's own options, and its environment
 * (and maxOutputChars, the old name of maxOutputBytes an older client sends).
 */
const CREATE_SESSION_KEYS: string[] = [...SESSION_KEYS, "maxOutputChars", "env"];
const EXECUTE_KEYS = [
  "command",
  "executionId",
  "cwd",
  "timeoutMs",
  "stdin",
  "stdinBase64",
  "stream",
  "isolated",
  "longLived",
  "separateStreams",
];
/** Streamed output waiting for a slow client beyond this is skipped; the final result still has it (head and tail). */
const MAX_STREAM_BACKLOG_BYTES = 4 * 1024 * 1024;

export async function handle(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    await route(ctx, req, res);
  } catch (error) {
    const httpError = toHttpError(error, ctx);
    // A body we refused before reading it (401, 413, …) is not read just to throw it
    // away: the connection closes after the answer instead.
    sendError(res, httpError, httpError.status === 413 || !req.complete ? { connection: "close" } : {});
  }
}

async function route(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? "GET";
  const pathname = requestPath(req.url);
  if (pathname !== undefined && !pathname.startsWith(`${API_PREFIX}/`))
    throw new HttpError(404, "NOT_FOUND", `No route ${pathname}; the API lives under ${API_PREFIX}/`);
  // The token is checked before anything in the path is decoded: a caller without it
  // learns nothing from a bad path but 401, and no path can make the route throw.
  const authorized = checkAccess(ctx, req);
  if (pathname === undefined) {
    if (!authorized) throw unauthorized();
    throw new HttpError(400, "BAD_REQUEST", "The request target is not a valid URL path");
  }
  const parts = decodedSegments(pathname.slice(API_PREFIX.length + 1));

  if (parts?.length === 1 && parts[0] === "health") {
    allow(method, ["GET"]);
    // Unauthenticated callers learn only that it is up.
    return sendJson(
      res,
      200,
      authorized
        ? {
            status: "ok",
            sessions: ctx.registry.size,
            runningExecutions: ctx.registry.runningExecutions,
            longLivedExecutions: ctx.registry.longLivedExecutions,
          }
        : { status: "ok" },
    );
  }
  if (!authorized) throw unauthorized();
  if (parts === undefined)
    throw new HttpError(
      400,
      "BAD_REQUEST",
      "The request path has malformed percent-encoding (a % not followed by UTF-8 in hex)",
    );

  if (parts[0] !== "sessions") throw new HttpError(404, "NOT_FOUND", `No route ${pathname}`);
  if (await checkpointRoute(ctx, parts, req, res, allow)) return;
  const [, id, sub, executionId, action] = parts;
  if (id === undefined || id === "") {
    allow(method, ["GET", "POST"]);
    if (method === "GET") return sendJson(res, 200, { sessions: ctx.registry.list() });
    return createSession(ctx, req, res);
  }
  if (sub === undefined) {
    allow(method, ["GET", "DELETE"]);
    if (method === "GET") return sendJson(res, 200, ctx.registry.info(id));
    await ctx.registry.close(id);
    res.writeHead(204).end();
    return;
  }
  if (sub === "executions" && executionId === undefined) {
    allow(method, ["POST"]);
    return execute(ctx, id, req, res);
  }
  if (sub === "executions" && executionId !== undefined && action === undefined) {
    allow(method, ["GET"]);
    const state = ctx.registry.executionState(id, executionId);
    if (state === undefined)
      throw new HttpError(
        404,
        "EXECUTION_NOT_FOUND",
        `Session ${id} has not seen execution ${JSON.stringify(executionId)} (or not recently)`,
      );
    return sendJson(res, 200, { executionId, state });
  }
  if (sub === "executions" && executionId !== undefined && action === "cancel" && parts.length === 5) {
    allow(method, ["POST"]);
    if (!ctx.registry.cancel(id, executionId)) {
      throw new HttpError(
        404,
        "EXECUTION_NOT_FOUND",
        `Execution ${JSON.stringify(executionId)} is not running in session ${id} (it finished or never started)`,
      );
    }
    return sendJson(res, 202, { cancelled: true });
  }
  throw new HttpError(404, "NOT_FOUND", `No route ${pathname}`);
}

const unauthorized = (): HttpError =>
  new HttpError(401, "UNAUTHORIZED", "Missing or wrong bearer token; send Authorization: Bearer <token>");

/** The path of a request target, undefined when it is not one a URL can hold. */
function requestPath(target: string | undefined): string | undefined {
  try {
    return new URL(target ?? "/", "http://gateway").pathname;
  } catch {
    return undefined;
  }
}

/** The path's segments, percent-decoded; undefined when an escape is malformed (`%E0%A4%A`). */
function decodedSegments(path: string): string[] | undefined {
  try {
    return path.split("/").map(decodeURIComponent);
  } catch {
    return undefined;
  }
}

/** True when the request carries the token (or auth is off); in no-auth mode, only loopback Host names pass. */
function checkAccess(ctx: RouteContext, req: IncomingMessage): boolean {
  if (ctx.auth) return ctx.auth.matches(req.headers.authorization);
  // Without a token a web page could reach us through DNS rebinding; its Host header gives it away.
  if (!ctx.hostAllowed(req.headers.host)) {
    throw new HttpError(
      403,
      "FORBIDDEN",
      `Host ${JSON.stringify(req.headers.host ?? "")} refused: a gateway without a token answers only to loopback names`,
    );
  }
  return true;
}

function allow(method: string, methods: string[]): void {
  if (!methods.includes(method))
    throw new HttpError(405, "METHOD_NOT_ALLOWED", `Method ${method} is not allowed here; use ${methods.join(" or ")}`);
}

async function createSession(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = jsonObject(await readJsonBody(req, ctx.maxBodyBytes));
  rejectUnknownFields(body, CREATE_SESSION_KEYS, "session");
  const request = { ...body } as CreateSessionRequest;
  if (body.cwd !== undefined) request.cwd = ctx.paths.check("cwd", stringField(body, "cwd"));
  const warnings: string[] = [];
  const info = await ctx.registry.create(() => ctx.openSession(request, (message) => warnings.push(message)));
  const answer: CreateSessionResponse = { ...info, warnings };
  sendJson(res, 201, answer);
}

async function execute(ctx: RouteContext, sessionId: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = jsonObject(await readJsonBody(req, ctx.maxBodyBytes));
  rejectUnknownFields(body, EXECUTE_KEYS, "execution");
  const command = stringField(body, "command");
  const executionId =
    body.executionId === undefined ? randomBytes(8).toString("hex") : stringField(body, "executionId");
  if (!EXECUTION_ID.test(executionId))
    throw new HttpError(
      400,
      "INVALID_OPTION",
      `executionId must be 1–64 of A-Z a-z 0-9 _ -, got ${JSON.stringify(executionId)}`,
      { option: "executionId" },
    );
  const options: Omit<ExecuteOptions, "signal"> = {};
  if (body.cwd !== undefined) options.cwd = ctx.paths.check("cwd", stringField(body, "cwd"));
  if (body.timeoutMs !== undefined) options.timeoutMs = body.timeoutMs as number; // the session validates it
  if (body.stdin !== undefined && body.stdinBase64 !== undefined)
    throw new HttpError(400, "INVALID_OPTION", "Send stdin or stdinBase64, not both", { option: "stdinBase64" });
  if (body.stdin !== undefined) options.stdin = stringField(body, "stdin");
  if (body.stdinBase64 !== undefined) options.stdin = base64Field(body, "stdinBase64");
  // Passed on as given: the session validates it (and says so if this build has no such option).
  if (body.isolated !== undefined) Object.assign(options, { isolated: body.isolated });
  if (body.separateStreams !== undefined) Object.assign(options, { separateStreams: body.separateStreams });
  for (const key of ["stream", "longLived"])
    if (body[key] !== undefined && typeof body[key] !== "boolean")
      throw new HttpError(400, "INVALID_OPTION", `${key} must be a boolean, got ${JSON.stringify(body[key])}`, {
        option: key,
      });

  // Fail on bad options before anything starts, while a plain status code can still say so.
  normalizeExecuteOptions(options, 1);
  // An empty command is a no-op, as in `bash -c ''`.
  shellString("command", command, { allowEmpty: true });

  // The client going away (closed socket) interrupts the command: nobody would read its result.
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  const run = ctx.registry.begin(sessionId, executionId, gone.signal, body.longLived === true);

  const mask = ctx.tokenMask;
  const masked = <T extends { output: string; cwd: string; stdout?: string; stderr?: string }>(result: T): T =>
    mask === undefined
      ? result
      : {
          ...result,
          output: mask.mask(result.output),
          cwd: mask.mask(result.cwd),
          ...(result.stdout === undefined ? {} : { stdout: mask.mask(result.stdout) }),
          ...(result.stderr === undefined ? {} : { stderr: mask.mask(result.stderr) }),
        };
  if (body.stream !== true) {
    const result = await run(command, options);
    if (ctx.registry.shuttingDown && result.interrupted) throw shuttingDown();
    const answer: ExecutionResult = { ...masked(result), executionId };
    return sendJson(res, 200, answer);
  }

  let skipped = 0;
  const send = (event: StreamEvent): void => {
    if (res.writableEnded || res.destroyed) return;
    if (event.type === "output" && res.writableLength > MAX_STREAM_BACKLOG_BYTES) {
      skipped += event.text.length;
      return;
    }
    res.write(`${JSON.stringify(event)}\n`);
  };
  res.writeHead(200, {
    "content-type": `${NDJSON}; charset=utf-8`,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  send({ type: "started", executionId });
  // Apart, each stream has its own events (and its own masker: a token may be cut across one stream's chunks).
  const apart = options.separateStreams === true;
  const maskers = { stdout: mask?.stream(), stderr: mask?.stream() };
  const output = (text: string, stream?: "stdout" | "stderr"): void => {
    if (text !== "") send(stream === undefined ? { type: "output", text } : { type: "output", text, stream });
  };
  const flush = (): void => {
    if (apart) for (const stream of ["stdout", "stderr"] as const) output(maskers[stream]?.end() ?? "", stream);
    else output(maskers.stdout?.end() ?? "");
  };
  const listen = (stream: "stdout" | "stderr") => (text: string) =>
    output(maskers[stream]?.push(text) ?? text, apart ? stream : undefined);
  try {
    const result = await run(
      command,
      apart
        ? { ...options, onStdout: listen("stdout"), onStderr: listen("stderr") }
        : { ...options, onOutput: listen("stdout") },
    );
    flush();
    if (ctx.registry.shuttingDown && result.interrupted) throw shuttingDown();
    if (skipped > 0)
      ctx.log(`execution ${executionId}: skipped ${skipped} characters of streamed output for a slow client`);
    send({ type: "result", result: { ...masked(result), executionId } });
  } catch (error) {
    flush();
    send({ type: "error", ...toHttpError(error, ctx).toBody() });
  }
  res.end();
}

const shuttingDown = (): HttpError =>
  new HttpError(503, "SHUTTING_DOWN", "The gateway is shutting down; the command was stopped");

function toHttpError(error: unknown, ctx: RouteContext): HttpError {
  if (error instanceof HttpError) return error;
  if (isShellwrightError(error)) {
    // A backend's message may quote what a command printed.
    const message = ctx.tokenMask?.mask(error.message) ?? error.message;
    if (error.code === "INVALID_OPTION")
      return new HttpError(400, "INVALID_OPTION", message, {
        option: (error as { option?: string }).option ?? "",
      });
    if (error.code === "SESSION_CLOSED")
      return new HttpError(404, "SESSION_NOT_FOUND", "The session was closed; create a new session");
    if (error instanceof CheckpointError)
      return new HttpError(error.reason === "not_found" ? 404 : 409, "CHECKPOINT_FAILED", message, {
        reason: error.reason,
      });
    if (error.code === "UNSUPPORTED") return new HttpError(501, "UNSUPPORTED", message);
    return new HttpError(502, "BACKEND_ERROR", message);
  }
  ctx.log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return new HttpError(500, "INTERNAL", "Internal gateway error; the gateway's log has the details");
}

function rejectUnknownFields(body: Record<string, unknown>, known: string[], what: string): void {
  for (const key of Object.keys(body)) {
    if (!known.includes(key))
      throw new HttpError(
        400,
        "INVALID_OPTION",
        `Unknown ${what} field ${JSON.stringify(key)}; known fields: ${known.join(", ")}`,
        { option: key },
      );
  }
}

function stringField(body: Record<string, unknown>, key: string): string {
  const value = body[key];
  if (typeof value !== "string")
    throw new HttpError(
      400,
      "INVALID_OPTION",
      `${key} must be a string, got ${value === null ? "null" : typeof value}`,
      { option: key },
    );
  return value;
}

function base64Field(body: Record<string, unknown>, key: string): Uint8Array {
  const value = stringField(body, key);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) {
    throw new HttpError(400, "INVALID_OPTION", `${key} must be standard base64 (A-Z a-z 0-9 + / with = padding)`, {
      option: key,
    });
  }
  return Buffer.from(value, "base64");
}
