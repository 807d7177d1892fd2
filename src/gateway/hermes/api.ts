/**
 * hermes' tool-gateway sandbox API (`shellwright serve --api hermes`): what
 * hermes' ManagedModalEnvironment speaks, under /v1/sandboxes. Its requests
 * are authenticated like Shellwright's own, before any body is read.
 *
 *   POST /v1/sandboxes                              create (x-idempotency-key)
 *   POST /v1/sandboxes/{id}/execs                   start a command
 *   GET  /v1/sandboxes/{id}/execs/{execId}          poll it
 *   POST /v1/sandboxes/{id}/execs/{execId}/cancel   interrupt it
 *   POST /v1/sandboxes/{id}/terminate               end the sandbox
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { ExecuteOptions } from "../../core/environment.js";
import { normalizeExecuteOptions } from "../../core/environment.js";
import { HttpError, jsonObject, readJsonBody, sendJson } from "../http.js";
import { settledWithin } from "../../core/settled-within.js";
import type { RouteContext } from "../routes.js";
import type { ServedApi } from "../served-api.js";
import { requireAccess } from "./access.js";
import { sendHermesError, toHttpError } from "./errors.js";
import { createFields, execFields, terminateFields } from "./fields.js";
import { idempotencyKey } from "./idempotency.js";
import type { ExecView } from "./execs.js";
import { SandboxTable } from "./sandboxes.js";

const PREFIX = "/v1/sandboxes";
/**
 * How long starting an exec waits for it to end before answering `running`:
 * one poll interval of hermes' client, so a quick command's result comes
 * with the start and costs no poll, while an interrupt is never held up longer.
 */
const START_WAIT_MS = 250;

/** The API as apis.ts serves it (a ServedApi: not named here, since apis.ts imports this module). */
export function hermesApi(ctx: RouteContext): ServedApi {
  const sandboxes = new SandboxTable(ctx);
  return {
    claims: (_req: IncomingMessage, pathname: string): boolean =>
      pathname === PREFIX || pathname.startsWith(`${PREFIX}/`),
    handle: async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      try {
        await route(ctx, sandboxes, req, res);
      } catch (error) {
        const answer = toHttpError(error, ctx);
        // A body refused before it was read (401, 413, …) is not read just to throw it away.
        sendHermesError(res, answer, answer.status === 413 || !req.complete ? { connection: "close" } : {});
      }
    },
  };
}

async function route(ctx: RouteContext, sandboxes: SandboxTable, req: IncomingMessage, res: ServerResponse) {
  requireAccess(ctx, req);
  const method = req.method ?? "GET";
  const path = new URL(req.url ?? "/", "http://gateway").pathname;
  const parts = segments(path.slice(PREFIX.length));
  const [id, sub, execId, action] = parts;

  if (parts.length === 0) {
    allow(method, "POST");
    const fields = createFields(await body(ctx, req));
    const made = await sandboxes.create(fields, idempotencyKey(req.headers["x-idempotency-key"]));
    return sendJson(res, made.created ? 201 : 200, {
      id: made.sandbox.id,
      status: "running",
      ignoredFields: fields.ignored,
      warnings: made.warnings,
    });
  }
  if (id === undefined || id === "") throw noRoute(path);
  if (sub === "terminate" && parts.length === 2) {
    allow(method, "POST");
    const sandbox = sandboxes.get(id);
    // hermes sends {snapshotBeforeTerminate}; a bare POST is as good.
    terminateFields(hasBody(req) ? await body(ctx, req) : {});
    await sandboxes.terminate(sandbox.id);
    return sendJson(res, 200, { id, status: "terminated" });
  }
  if (sub !== "execs") throw noRoute(path);
  if (execId === undefined) {
    allow(method, "POST");
    return startExec(ctx, sandboxes, id, req, res);
  }
  const exec = sandboxes.get(id).execs.get(execId);
  if (action === undefined) {
    allow(method, "GET");
    return sendJson(res, 200, exec.view);
  }
  if (action === "cancel" && parts.length === 4) {
    allow(method, "POST");
    if (!exec.running) return sendJson(res, 200, exec.view);
    exec.cancel();
    return sendJson(res, 202, { execId: exec.execId, status: "cancelling" });
  }
  throw noRoute(path);
}

async function startExec(
  ctx: RouteContext,
  sandboxes: SandboxTable,
  id: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  // The body first: a terminate that comes while it is on its way has then been seen by the lookup (or by start()).
  const fields = execFields(await body(ctx, req));
  const sandbox = sandboxes.get(id);
  const earlier = sandbox.execs.find(fields.execId);
  if (earlier !== undefined) {
    // A resent start (its answer was lost) gets the exec it started, never a second run.
    if (earlier.command !== fields.command)
      throw new HttpError(
        409,
        "DUPLICATE_EXECUTION",
        `execId ${JSON.stringify(fields.execId)} already started another command in sandbox ${id}; use a new execId`,
        { option: "execId" },
      );
    return answer(res, earlier.view);
  }
  const options: Omit<ExecuteOptions, "signal"> = {};
  const cwd = sandboxes.execCwd(sandbox, fields.cwd);
  if (cwd !== undefined) options.cwd = cwd;
  if (fields.timeoutMs !== undefined) options.timeoutMs = fields.timeoutMs;
  if (fields.stdinData !== undefined) options.stdin = fields.stdinData;
  // Bad options fail here, with a 400, before anything runs.
  normalizeExecuteOptions(options, 1);
  const exec = sandbox.execs.start(fields.execId, fields.command, options);
  await settledWithin(exec.ended, START_WAIT_MS);
  return answer(res, exec.view);
}

/** A start's answer: 200 with the result when the exec has ended, 202 while it runs (hermes' client then polls). */
function answer(res: ServerResponse, view: ExecView): void {
  sendJson(res, view.status === "running" ? 202 : 200, view);
}

async function body(ctx: RouteContext, req: IncomingMessage): Promise<Record<string, unknown>> {
  return jsonObject(await readJsonBody(req, ctx.maxBodyBytes));
}

/** Whether the request carries a body at all (hermes' client sends Content-Length: 0 without one). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/** The path's segments after /v1/sandboxes, percent-decoded; a 400 for a malformed escape. */
function segments(rest: string): string[] {
  if (rest === "") return [];
  try {
    return rest.slice(1).split("/").map(decodeURIComponent);
  } catch {
    throw new HttpError(
      400,
      "BAD_REQUEST",
      "The request path has malformed percent-encoding (a % not followed by UTF-8 in hex)",
    );
  }
}

function allow(method: string, expected: string): void {
  if (method !== expected)
    throw new HttpError(405, "METHOD_NOT_ALLOWED", `Method ${method} is not allowed here; use ${expected}`);
}

const noRoute = (path: string): HttpError =>
  new HttpError(404, "NOT_FOUND", `No route ${path} in hermes' sandbox API (see docs/gateway.md)`);
