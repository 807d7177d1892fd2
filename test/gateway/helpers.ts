/** A real gateway on a free loopback port, and raw HTTP calls to it. */

import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGateway, type Gateway, type GatewayOptions } from "../../src/index.js";

export const TOKEN = "test-token-0123456789abcdef";

export async function startTestGateway(options: GatewayOptions = {}): Promise<Gateway> {
  return startGateway({ token: TOKEN, port: 0, allowedRoots: ["/"], log: () => undefined, ...options });
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON under test
}

/** One HTTP call; `token: null` sends no Authorization header. */
export async function api(
  gateway: Gateway,
  method: string,
  path: string,
  body?: unknown,
  options: { token?: string | null; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<ApiAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? TOKEN : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let payload: string | undefined = options.rawBody;
  if (body !== undefined) payload = JSON.stringify(body);
  if (payload !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers,
    ...(payload === undefined ? {} : { body: payload }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) };
}

export function scratchDir(): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), "sw-gw-test-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A request through node:http, for what fetch will not send (a Host header) or must cut mid-way. */
export function rawRequest(
  gateway: Gateway,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${gateway.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}
