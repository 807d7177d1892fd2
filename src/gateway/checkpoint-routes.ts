/**
 * The gateway's checkpoint routes (docs/branching.md, docs/gateway.md): the
 * server's session does the work on its own backend; these only name it.
 *
 *   POST   /sessions/{id}/checkpoints                 → 201 {checkpoint}
 *   GET    /sessions/{id}/checkpoints                 → 200 {checkpoints}
 *   POST   /sessions/{id}/checkpoints/{cp}/rollback   → 200 {cwd}
 *   DELETE /sessions/{id}/checkpoints/{cp}            → 204
 *   POST   /sessions/{id}/fork  {count}               → 201 {sessions}
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Checkpoint } from "../core/checkpoint.js";
import { checkForkOptions } from "../core/checkpoint.js";
import type { Environment } from "../core/environment.js";
import type { CheckpointInfo, ForkResponse } from "../http/gateway-protocol.js";
import { HttpError, jsonObject, readJsonBody, sendJson } from "./http.js";
import type { SessionRegistry } from "./sessions.js";

export interface CheckpointRouteContext {
  registry: SessionRegistry;
  maxBodyBytes: number;
}

/** Handles a checkpoint or fork request; false when `parts` names neither. */
export async function checkpointRoute(
  ctx: CheckpointRouteContext,
  parts: string[],
  req: IncomingMessage,
  res: ServerResponse,
  allow: (method: string, methods: string[]) => void,
): Promise<boolean> {
  const method = req.method ?? "GET";
  const [, id, sub, checkpointId, action] = parts;
  if (id === undefined || (sub !== "checkpoints" && sub !== "fork")) return false;
  const signal = requestSignal(req, res);
  if (sub === "fork" && parts.length === 3) {
    allow(method, ["POST"]);
    const { count } = checkForkOptions(await fields(ctx, req, "fork", ["count"]));
    const answer: ForkResponse = { sessions: await ctx.registry.fork(id, count, signal) };
    sendJson(res, 201, answer);
    return true;
  }
  if (sub !== "checkpoints") return false;
  if (checkpointId === undefined || (checkpointId === "" && parts.length === 4)) {
    allow(method, ["GET", "POST"]);
    if (method === "GET") {
      const checkpoints = await ctx.registry.branch(id, (env) => env.checkpoints().map(checkpointInfo));
      sendJson(res, 200, { checkpoints });
      return true;
    }
    await fields(ctx, req, "checkpoint", []);
    const checkpoint = await ctx.registry.branch(id, (env) => env.checkpoint({ signal }));
    sendJson(res, 201, { checkpoint: checkpointInfo(checkpoint) });
    return true;
  }
  if (action === undefined && parts.length === 4) {
    allow(method, ["DELETE"]);
    await ctx.registry.branch(id, (env) => env.releaseCheckpoint(find(env, checkpointId)));
    res.writeHead(204).end();
    return true;
  }
  if (action === "rollback" && parts.length === 5) {
    allow(method, ["POST"]);
    await fields(ctx, req, "rollback", []);
    const cwd = await ctx.registry.branch(id, async (env) => {
      await env.rollback(find(env, checkpointId), { signal });
      return env.cwd;
    });
    sendJson(res, 200, { cwd });
    return true;
  }
  return false;
}

/** The request's JSON object (none, or `{}`, where nothing is taken), refusing fields it does not know. */
async function fields(
  ctx: CheckpointRouteContext,
  req: IncomingMessage,
  what: string,
  known: string[],
): Promise<Record<string, unknown>> {
  const noBody =
    req.headers["content-length"] === "0" || (!req.headers["content-length"] && !req.headers["transfer-encoding"]);
  const body = noBody && known.length === 0 ? {} : jsonObject(await readJsonBody(req, ctx.maxBodyBytes));
  const unknown = Object.keys(body).find((key) => !known.includes(key));
  if (unknown !== undefined)
    throw new HttpError(
      400,
      "INVALID_OPTION",
      `Unknown ${what} field ${JSON.stringify(unknown)}; ${known.length === 0 ? "it takes none" : `known fields: ${known.join(", ")}`}`,
      { option: unknown },
    );
  return body;
}

function find(env: Environment, checkpointId: string): Checkpoint {
  const checkpoint = env.checkpoints().find((each) => each.id === checkpointId);
  if (checkpoint === undefined)
    throw new HttpError(
      404,
      "CHECKPOINT_FAILED",
      `Session ${env.id} has no checkpoint ${JSON.stringify(checkpointId)} (released, or never made in it)`,
      { reason: "not_found" },
    );
  return checkpoint;
}

export function checkpointInfo(checkpoint: Checkpoint): CheckpointInfo {
  return {
    id: checkpoint.id,
    createdAt: checkpoint.createdAt.toISOString(),
    holds: {
      shell: true,
      ...(checkpoint.holds.workspace === undefined ? {} : { workspace: { ...checkpoint.holds.workspace } }),
      ...(checkpoint.holds.filesystem === undefined ? {} : { filesystem: { ...checkpoint.holds.filesystem } }),
    },
  };
}

/** Aborted when the client goes away before the answer: a checkpoint or rollback nobody waits for stops. */
function requestSignal(req: IncomingMessage, res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone.signal;
}
