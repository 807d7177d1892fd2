/**
 * The gateway backend's config: its public type, the option names it accepts
 * and their validation, in one place.
 */

import { InvalidOptionError } from "../../core/errors.js";
import { describe, positiveNumber, rejectUnknown, shellString, stringRecord } from "../../core/options.js";
import { optionKeys, type CommonConfig } from "../shared/config.js";
import { TOKEN_ENV_VAR } from "../../http/gateway-protocol.js";

export interface GatewayConfig extends CommonConfig {
  backend: "gateway";
  /** Base URL of a `shellwright serve`, e.g. http://127.0.0.1:7420 */
  url: string;
  /** The gateway's bearer token. @default $SHELLWRIGHT_GATEWAY_TOKEN */
  token?: string;
  /** Variables added to the session's starting environment on the gateway's backend. */
  env?: Record<string, string>;
  /** How long to keep retrying while the gateway refuses connections (restarting). @default 3000 */
  connectRetryMs?: number;
  /** Limit for a control request (create, close, cancel); an execution waits for its own timeout on top. @default 30000 */
  requestTimeoutMs?: number;
  /** How long an execution keeps retrying while the gateway is at its execution limit (429). @default 30000 */
  busyTimeoutMs?: number;
}

export const GATEWAY_KEYS = optionKeys<GatewayConfig>()([
  "url",
  "token",
  "env",
  "connectRetryMs",
  "requestTimeoutMs",
  "busyTimeoutMs",
]);

/** The gateway's own options, validated; the common ones go through sessionOptions. */
export interface GatewayTransportOptions {
  url: URL;
  token: string | undefined;
  /** Only when the caller set it: the gateway's config fills the rest. */
  env: Record<string, string> | undefined;
  connectRetryMs: number;
  requestTimeoutMs: number;
  busyTimeoutMs: number;
}

export function normalizeGatewayConfig(raw: Record<string, unknown>): GatewayTransportOptions {
  rejectUnknown("gateway backend", raw, GATEWAY_KEYS);
  let url: URL;
  try {
    url = new URL(shellString("url", raw.url));
  } catch (error) {
    if (error instanceof InvalidOptionError) throw error;
    throw new InvalidOptionError("url", `url must be an http:// or https:// URL, got ${describe(raw.url)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new InvalidOptionError("url", `url must be an http:// or https:// URL, got ${describe(raw.url)}`);
  // Surrounding whitespace trimmed, as the server trims its own token file: a token read from a file ends in "\n".
  const given = raw.token ?? process.env[TOKEN_ENV_VAR];
  const token = typeof given === "string" ? given.trim() : given;
  if (token !== undefined && (typeof token !== "string" || token === "" || /\s/.test(token))) {
    throw new InvalidOptionError("token", "token must be a non-empty string without whitespace");
  }
  return {
    url,
    token,
    env: raw.env === undefined ? undefined : stringRecord("env", raw.env),
    connectRetryMs: nonNegativeNumber("connectRetryMs", raw.connectRetryMs, 3000),
    requestTimeoutMs: positiveNumber("requestTimeoutMs", raw.requestTimeoutMs, 30_000),
    busyTimeoutMs: nonNegativeNumber("busyTimeoutMs", raw.busyTimeoutMs, 30_000),
  };
}

function nonNegativeNumber(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new InvalidOptionError(name, `${name} must be a number of milliseconds, 0 or more, got ${describe(value)}`);
  }
  return value;
}

/** What this backend cannot open without, with a value a user would give (the CLI words a missing one with it). */
export const GATEWAY_REQUIRED: Readonly<Record<string, string>> = { url: "http://127.0.0.1:7420" };
