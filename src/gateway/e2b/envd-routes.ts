/**
 * What envd serves, in one place: its Connect services (process/ and
 * filesystem/) and its plain HTTP routes (/health and /envs here; /files,
 * which also takes signed URLs, is routed by api.ts before the token check).
 * Every handler here runs after the router has authenticated the sandbox.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { ConnectRouter } from "@connectrpc/connect";
import { Filesystem } from "./gen/filesystem/filesystem_pb.js";
import { Process } from "./gen/process/process_pb.js";
import { filesystemService } from "./filesystem/index.js";
import { processService } from "./process/service.js";
import type { SessionRegistry } from "../sessions.js";
import type { PathPolicy } from "../paths.js";
import { sendJson } from "../http.js";
import type { SandboxEntry } from "./entry.js";
import { maskedEnvs } from "./masked-envs.js";

export type EnvdHttpHandler = (
  entry: SandboxEntry,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
) => Promise<void>;

/** envd's plain HTTP routes by path, each given the authenticated sandbox. */
export const ENVD_HTTP_ROUTES: Record<string, EnvdHttpHandler> = {
  // envd answers 204 while it runs; a sandbox that is gone never gets here (the router answers 502, as E2B's proxy does).
  "/health": async (_entry, _req, res) => {
    res.writeHead(204, { "cache-control": "no-store" }).end();
  },
  "/envs": async (entry, _req, res) => sendJson(res, 200, maskedEnvs(entry.envVars, entry.record.tokenMask)),
};

/** envd's Connect services (their handlers read SANDBOX or SANDBOX_ENTRY from the context). */
export function envdServices(registry: SessionRegistry, paths: PathPolicy): (router: ConnectRouter) => void {
  return (router) => {
    router.service(Process, processService(registry, paths));
    // Its watchers end with their sandbox's session, which the sandbox table closes.
    router.service(Filesystem, filesystemService().impl);
  };
}
