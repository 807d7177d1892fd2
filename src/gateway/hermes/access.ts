/**
 * Who may use hermes' API: the same rule as Shellwright's own API on the
 * same port (src/gateway/routes.ts), checked before anything in the path is
 * decoded or any body is read.
 */

import type { IncomingMessage } from "node:http";
import { HttpError } from "../http.js";
import type { RouteContext } from "../routes.js";

/** Throws a 401 without the gateway's token (403 for a foreign Host when it runs without one). */
export function requireAccess(ctx: RouteContext, req: IncomingMessage): void {
  if (ctx.auth) {
    if (ctx.auth.matches(req.headers.authorization)) return;
    throw new HttpError(401, "UNAUTHORIZED", "Missing or wrong bearer token; send Authorization: Bearer <token>");
  }
  // Without a token a web page could reach us through DNS rebinding; its Host header gives it away.
  if (!ctx.hostAllowed(req.headers.host))
    throw new HttpError(
      403,
      "FORBIDDEN",
      `Host ${JSON.stringify(req.headers.host ?? "")} refused: a gateway without a token answers only to loopback names`,
    );
}
