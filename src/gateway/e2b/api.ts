/**
 * `shellwright serve --api e2b`: E2B's control API and every sandbox's envd
 * on serve's one port. The SDK reaches envd at E2B_SANDBOX_URL and names the
 * sandbox in an `E2b-Sandbox-Id` header, so a request is envd's when it has
 * that header or an envd-only path, and the control API's otherwise.
 *
 * Control requests carry the gateway token as `X-API-Key`; envd requests the
 * sandbox's own access token (from create) as `X-Access-Token`, so one
 * sandbox's token opens no other.
 */

import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { ServedApi } from "../served-api.js";
import type { RouteContext } from "../routes.js";
import { E2bError, sendE2bError, toE2bError } from "./errors.js";
import { controlRoute } from "./control.js";
import { SANDBOX_ENTRY, type SandboxEntry } from "./entry.js";
import { ENVD_HTTP_ROUTES, envdServices } from "./envd-routes.js";
import { filesRoute } from "./files-route.js";
import { SANDBOX } from "./sandbox.js";
import { SandboxTable } from "./sandbox-table.js";
import { SnapshotStore } from "./snapshots.js";

const CONTROL =
  /^\/(v2\/)?sandboxes(\/|$)|^\/(v[23]\/)?templates(\/|$)|^\/(snapshots|volumes|volumecontent|secrets|teams)(\/|$)/;
const RPC = /^\/(process\.Process|filesystem\.Filesystem)\//;
/** Snapshots held at once: each is a live session of the backend (snapshots.ts). */
const MAX_SNAPSHOTS = 32;
const ENVD_HTTP = new Set(["/files", "/envs", "/init", "/metrics"]);

export function e2bApi(ctx: RouteContext): ServedApi {
  const table = new SandboxTable(ctx);
  const snapshots = new SnapshotStore(ctx.registry, MAX_SNAPSHOTS);
  const authenticated = new WeakMap<IncomingMessage, SandboxEntry>();
  const rpc = connectNodeAdapter({
    routes: envdServices(ctx.registry, ctx.paths),
    readMaxBytes: ctx.maxBodyBytes,
    // A service not mounted here (yet): said by name, not as a bare 404.
    fallback: (req, res) =>
      sendConnectError(
        res as ServerResponse,
        new E2bError(
          501,
          `envd's ${new URL(req.url ?? "/", "http://e2b").pathname} is not implemented by this Shellwright server`,
        ),
        {},
      ),
    contextValues: (req) => {
      const entry = authenticated.get(req as IncomingMessage);
      return createContextValues().set(SANDBOX_ENTRY, entry).set(SANDBOX, entry?.record);
    },
  });

  const isEnvd = (req: IncomingMessage, pathname: string): boolean =>
    RPC.test(pathname) ||
    ENVD_HTTP.has(pathname) ||
    (pathname === "/health" && req.headers["e2b-sandbox-id"] !== undefined);

  return {
    claims: (req, pathname) => isEnvd(req, pathname) || CONTROL.test(pathname) || pathname === "/health",
    handle: async (req, res) => {
      let url: URL;
      try {
        url = new URL(req.url ?? "/", "http://e2b");
      } catch {
        return sendE2bError(res, new E2bError(400, "The request target is not a valid URL path"), {
          connection: "close",
        });
      }
      const envd = isEnvd(req, url.pathname);
      try {
        if (ctx.auth === undefined && !ctx.hostAllowed(req.headers.host))
          throw new E2bError(
            403,
            `Host ${JSON.stringify(req.headers.host ?? "")} refused: a server without a token answers only to loopback names`,
          );
        if (envd) return await envdRoute(req, res, url);
        if (url.pathname === "/health") {
          res.writeHead(204).end();
          return;
        }
        if (ctx.auth !== undefined && !ctx.auth.matches(`Bearer ${header(req, "x-api-key") ?? ""}`))
          throw new E2bError(
            401,
            "Invalid API key: send this server's token as X-API-Key (the SDK's apiKey or E2B_API_KEY)",
          );
        await controlRoute(ctx, table, snapshots, req, res, url);
      } catch (error) {
        const e2bError = toE2bError(error, ctx.log);
        const close: Record<string, string> = req.complete ? {} : { connection: "close" };
        if (envd && RPC.test(url.pathname)) sendConnectError(res, e2bError, close);
        else sendE2bError(res, e2bError, close);
      }
    },
    close: async () => {
      table.close();
      await snapshots.close();
    },
  };

  async function envdRoute(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    // /files authenticates itself: a signed URL needs neither the token nor the sandbox id.
    if (url.pathname === "/files")
      return filesRoute(req, res, url, {
        find: (id) => table.find(id)?.record,
        all: () => table.list().map((entry) => entry.record),
        maxUploadBytes: ctx.maxBodyBytes,
      });
    const id = header(req, "e2b-sandbox-id");
    if (id === undefined)
      throw new E2bError(
        400,
        "Missing the E2b-Sandbox-Id header naming the sandbox (the SDK sends it when sandboxUrl is set)",
      );
    const entry = table.find(id);
    // A sandbox that is gone gets what E2B's proxy answers for one: 502, which the SDK reads as "not running".
    if (entry === undefined)
      throw new E2bError(502, `The sandbox ${JSON.stringify(id)} was not found (killed or timed out)`);
    if (!sameSecret(header(req, "x-access-token") ?? "", entry.record.accessToken))
      throw new E2bError(
        401,
        `Invalid X-Access-Token for sandbox ${JSON.stringify(id)}: send the envdAccessToken its create or connect returned`,
      );
    if (RPC.test(url.pathname)) {
      authenticated.set(req, entry);
      entry.openRpcs.add(res);
      return new Promise<void>((resolve) => {
        res.once("close", () => {
          entry.openRpcs.delete(res);
          resolve();
        });
        rpc(req, res);
      });
    }
    const route = ENVD_HTTP_ROUTES[url.pathname];
    if (route === undefined)
      throw new E2bError(501, `envd's ${url.pathname} is not implemented by this Shellwright server`);
    await route(entry, req, res, url);
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Constant time: both sides hashed to one length first. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected)) && given.length > 0;
}

/** Connect's error body, so the SDK's Connect client reads the code and message (502 maps to unavailable). */
const CONNECT_CODES: Record<number, string> = {
  400: "invalid_argument",
  401: "unauthenticated",
  403: "permission_denied",
  404: "not_found",
  429: "resource_exhausted",
  501: "unimplemented",
  502: "unavailable",
  503: "unavailable",
};

function sendConnectError(res: ServerResponse, error: E2bError, headers: Record<string, string>): void {
  if (res.headersSent) return;
  const text = JSON.stringify({ code: CONNECT_CODES[error.status] ?? "internal", message: error.message });
  res.writeHead(error.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
