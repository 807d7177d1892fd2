/**
 * Opens a gateway session: one hosted by `shellwright serve` and reached over
 * HTTP (a GatewayEnvironment, not a Session: the server runs the session).
 */

import type { Environment } from "../../core/environment.js";
import { SESSION_KEYS, sessionOptions } from "../shared/config.js";
import { normalizeGatewayConfig } from "./config.js";
import { GatewayEnvironment } from "./environment.js";
import type { CreateSessionRequest } from "../../http/gateway-protocol.js";
import { isLoopbackHost } from "../../http/loopback.js";

export function openGateway(raw: Record<string, unknown>): Promise<Environment> {
  const gateway = normalizeGatewayConfig(raw);
  const session = sessionOptions(raw, "~");
  if (gateway.url.protocol === "http:" && gateway.token !== undefined && !isLoopbackHost(gateway.url.hostname)) {
    session.warn(`the gateway token is sent unencrypted to ${gateway.url.host}; use https:// or a loopback address`);
  }
  // Only what the caller chose goes to the gateway; the gateway's config fills the rest.
  const request: CreateSessionRequest = {};
  for (const key of SESSION_KEYS) {
    // maxOutputChars, the deprecated spelling, was read into maxOutputBytes: it is the caller's choice too.
    const chosen = raw[key] !== undefined || (key === "maxOutputBytes" && raw.maxOutputChars !== undefined);
    if (chosen) Object.assign(request, { [key]: session[key] });
  }
  if (gateway.env !== undefined) request.env = gateway.env;
  return GatewayEnvironment.open(
    {
      url: gateway.url,
      token: gateway.token,
      connectRetryMs: gateway.connectRetryMs,
      requestTimeoutMs: gateway.requestTimeoutMs,
      busyTimeoutMs: gateway.busyTimeoutMs,
      timeoutMs: session.timeoutMs,
      killGraceMs: session.killGraceMs,
      maxOutputBytes: session.maxOutputBytes,
      outputHeadFraction: session.outputHeadFraction,
      warn: session.warn,
      secretValues: session.secretValues ?? [],
    },
    request,
    session.resume,
  );
}
