/**
 * E2B's control API (spec/openapi.yml) over the sandbox table: create,
 * list, info, connect, timeout and kill; the rest of E2B's API answers 501
 * naming the feature. Authentication is done before any of this runs.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { cpus, totalmem } from "node:os";
import { jsonObject, readJsonBody, sendJson } from "../http.js";
import type { RouteContext } from "../routes.js";
import { sandboxPage } from "./sandbox-list.js";
import { E2bError, notImplemented } from "./errors.js";
import { newSandbox, timeoutSeconds } from "./control-body.js";
import { branchRoute } from "./branch-routes.js";
import { allow, decodedId } from "./route-parts.js";
import type { SnapshotStore } from "./snapshots.js";
import { ENVD_VERSION } from "./envd-version.js";
import type { SandboxEntry } from "./entry.js";
import type { SandboxTable } from "./sandbox-table.js";

/** Paths of E2B's API that exist but are not served here, and the feature each is. */
const UNSERVED: [RegExp, string][] = [
  [/^\/sandboxes\/[^/]+\/(pause|resume)$/, "Pause and resume"],
  [/^\/(v2\/)?sandboxes\/([^/]+\/)?metrics$/, "Sandbox metrics"],
  [/^\/(v2\/)?sandboxes\/[^/]+\/logs$/, "Sandbox logs"],
  [/^\/sandboxes\/[^/]+\/network$/, "Network (egress) rules"],
  [/^\/sandboxes\/[^/]+\/refreshes$/, "refreshes"],
  [/^\/volume/, "Volumes"],
  [/^\/secrets/, "Secrets"],
  [/^\/teams/, "Teams"],
  [/^\/snapshots\//, "This snapshots route (GET /snapshots lists them)"],
];

export async function controlRoute(
  ctx: RouteContext,
  table: SandboxTable,
  snapshots: SnapshotStore,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const method = req.method ?? "GET";
  const path = url.pathname.replace(/\/+$/, "");
  const body = async (): Promise<Record<string, unknown>> => {
    const text = req.headers["content-length"] === "0" ? undefined : await readJsonBody(req, ctx.maxBodyBytes);
    return text === undefined ? {} : jsonObject(text);
  };

  if (path === "/sandboxes" || path === "/v2/sandboxes") {
    if (method === "POST") {
      const request = newSandbox(await body(), (template) => snapshots.find(template) !== undefined);
      const snapshot = snapshots.find(request.templateId);
      const entry = await (snapshot === undefined
        ? table.create(request)
        : table.createFrom(snapshot, { ...request, templateId: snapshot.snapshotId }));
      return sendJson(res, 201, created(entry));
    }
    allow(method, "GET");
    const page = sandboxPage(table.list(), url.searchParams, path === "/v2/sandboxes");
    return sendJson(
      res,
      200,
      page.entries.map(summary),
      page.nextToken === undefined ? {} : { "x-next-token": page.nextToken },
    );
  }
  if (await branchRoute({ table, snapshots, method, path, url, body, created }, req, res)) return;
  for (const [pattern, feature] of UNSERVED) if (pattern.test(path)) throw notImplemented(feature);

  const match = /^(?:\/v2)?\/sandboxes\/([^/]+)(?:\/([^/]+))?$/.exec(path);
  if (match === null) throw new E2bError(404, `No E2B API route ${method} ${path} on this server`);
  const id = decodedId(match[1]!);
  const action = match[2];
  if (action === undefined) {
    if (method === "DELETE") {
      await table.kill(id);
      res.writeHead(204).end();
      return;
    }
    allow(method, "GET");
    return sendJson(res, 200, detail(table.get(id)));
  }
  allow(method, "POST");
  const entry = table.get(id);
  if (action === "timeout") {
    table.setTimeout(entry, timeoutSeconds((await body()).timeout));
    res.writeHead(204).end();
    return;
  }
  if (action === "connect") {
    const timeout = (await body()).timeout;
    // E2B's connect extends a running sandbox's life to at least `timeout` from now; it never shortens it.
    if (timeout !== undefined) {
      const seconds = timeoutSeconds(timeout);
      if (Date.now() + seconds * 1000 > entry.endAt.getTime()) table.setTimeout(entry, seconds);
    }
    return sendJson(res, 200, created(entry));
  }
  throw new E2bError(404, `No E2B API route ${method} ${path} on this server`);
}

/** openapi.yml's Sandbox: what create and connect answer. */
function created(entry: SandboxEntry): Record<string, unknown> {
  return {
    templateID: entry.templateId,
    sandboxID: entry.record.sandboxId,
    clientID: "shellwright",
    envdVersion: ENVD_VERSION,
    envdAccessToken: entry.record.accessToken,
    trafficAccessToken: null,
    domain: null,
  };
}

/** openapi.yml's ListedSandbox. */
function summary(entry: SandboxEntry): Record<string, unknown> {
  return {
    templateID: entry.templateId,
    sandboxID: entry.record.sandboxId,
    clientID: "shellwright",
    startedAt: entry.startedAt.toISOString(),
    endAt: entry.endAt.toISOString(),
    cpuCount: cpus().length,
    memoryMB: Math.floor(totalmem() / 2 ** 20),
    diskSizeMB: 0,
    metadata: entry.metadata,
    state: "running",
    envdVersion: ENVD_VERSION,
    volumeMounts: [],
  };
}

/** openapi.yml's SandboxDetail. */
function detail(entry: SandboxEntry): Record<string, unknown> {
  return { ...summary(entry), envdAccessToken: entry.record.accessToken, domain: null };
}
