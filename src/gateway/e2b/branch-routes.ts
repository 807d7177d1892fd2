/**
 * E2B's fork and snapshot routes on serve (openapi.yml):
 *   POST   /sandboxes/{id}/fork        {count, timeout}  → 201 [{sandbox} | {error}]
 *   POST   /sandboxes/{id}/snapshots   {name}            → 201 SnapshotInfo
 *   GET    /snapshots?sandboxID&name&limit&nextToken    → 200 [SnapshotInfo]
 *   DELETE /templates/{snapshotID}                      → 204, or 404 for no such snapshot
 * A sandbox made from a snapshot is created by POST /sandboxes naming it as
 * the template (control.ts).
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { sendJson } from "../http.js";
import { E2bError, notImplemented } from "./errors.js";
import type { SandboxEntry } from "./entry.js";
import { checkCopiesFiles, forkRequest } from "./fork.js";
import type { SandboxTable } from "./sandbox-table.js";
import { snapshotInfo, type Snapshot, type SnapshotStore } from "./snapshots.js";
import { timeoutSeconds } from "./control-body.js";
import { allow, decodedId } from "./route-parts.js";
import { pageCursor, pageLimit, pageToken } from "./sandbox-list.js";

export interface BranchRouteContext {
  table: SandboxTable;
  snapshots: SnapshotStore;
  method: string;
  path: string;
  url: URL;
  body(): Promise<Record<string, unknown>>;
  /** What E2B's create answers for a sandbox (control.ts), which a fork's entries carry. */
  created(entry: SandboxEntry): Record<string, unknown>;
}

/** Handles a fork or snapshot request; false when the path is none of them. */
export async function branchRoute(
  ctx: BranchRouteContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const { method, path } = ctx;
  const sandboxAction = /^\/sandboxes\/([^/]+)\/(fork|snapshots)$/.exec(path);
  if (sandboxAction !== null) {
    allow(method, "POST");
    const body = await ctx.body();
    const signal = requestSignal(res);
    if (sandboxAction[2] === "fork") {
      const request = forkRequest(body, timeoutSeconds);
      const entry = ctx.table.get(decodedId(sandboxAction[1]!));
      checkCopiesFiles(entry, "fork");
      const children = await ctx.table.fork(entry, request.count, request.timeoutS, signal);
      sendJson(
        res,
        201,
        children.map((child) => ({ sandbox: ctx.created(child) })),
      );
      return true;
    }
    const name = body.name;
    if (name !== undefined && name !== null && typeof name !== "string")
      throw new E2bError(400, `name must be a string, got ${JSON.stringify(name)}`);
    const entry = ctx.table.get(decodedId(sandboxAction[1]!));
    const snapshot = await ctx.snapshots.take(entry, name ?? undefined, signal);
    sendJson(res, 201, snapshotInfo(snapshot));
    return true;
  }
  if (path === "/snapshots") {
    allow(method, "GET");
    const params = ctx.url.searchParams;
    const all = ctx.snapshots.list({
      sandboxId: params.get("sandboxID") ?? undefined,
      name: params.get("name") ?? undefined,
    });
    const page = snapshotPage(all, params);
    sendJson(
      res,
      200,
      page.items.map(snapshotInfo),
      page.nextToken === undefined ? {} : { "x-next-token": page.nextToken },
    );
    return true;
  }
  const template = /^\/(?:v[23]\/)?templates\/([^/]+)$/.exec(path);
  if (template !== null && method === "DELETE") {
    if (!(await ctx.snapshots.delete(decodedId(template[1]!))))
      throw new E2bError(404, `No snapshot ${JSON.stringify(decodedId(template[1]!))} on this server`);
    res.writeHead(204).end();
    return true;
  }
  if (template !== null || path.startsWith("/templates") || /^\/v[23]\/templates/.test(path))
    throw notImplemented("The templates API (this server has template base and the snapshots taken here)");
  return false;
}

/** Aborts when the client goes away before the answer is sent (a fork then closes the children it opened). */
function requestSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

function snapshotPage(all: Snapshot[], params: URLSearchParams): { items: Snapshot[]; nextToken: string | undefined } {
  const limit = pageLimit(params);
  const token = params.get("nextToken") ?? "";
  // The token is the last snapshot of the page before: the next page starts after it (by time, then id).
  const after = token === "" ? undefined : pageCursor(token);
  const rest =
    after === undefined
      ? all
      : all.filter(
          (s) =>
            s.createdAt.getTime() > after.time || (s.createdAt.getTime() === after.time && s.snapshotId > after.id),
        );
  const items = rest.slice(0, limit);
  const last = items.at(-1);
  return {
    items,
    nextToken:
      rest.length > limit && last !== undefined ? pageToken(last.createdAt.getTime(), last.snapshotId) : undefined,
  };
}
