/**
 * HTTP plumbing for the gateway: errors that carry a status, JSON answers,
 * and the JSON body of a request (its size limit is src/http's).
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { ErrorBody, GatewayErrorCode } from "../http/gateway-protocol.js";
import { jsonSyntaxProblem } from "../core/json-error.js";
import { readBody, TOO_LARGE } from "../http/body-limit.js";

export class HttpError extends Error {
  readonly status: number;
  readonly code: GatewayErrorCode;
  readonly option: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly reason: string | undefined;

  constructor(
    status: number,
    code: GatewayErrorCode,
    message: string,
    extra: { option?: string; retryAfterMs?: number; reason?: string } = {},
  ) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.code = code;
    this.option = extra.option;
    this.retryAfterMs = extra.retryAfterMs;
    this.reason = extra.reason;
  }

  toBody(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.option === undefined ? {} : { option: this.option }),
        ...(this.retryAfterMs === undefined ? {} : { retryAfterMs: this.retryAfterMs }),
        ...(this.reason === undefined ? {} : { reason: this.reason }),
      },
    };
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError, headers: Record<string, string> = {}): void {
  const extra: Record<string, string> = { ...headers };
  if (error.retryAfterMs !== undefined)
    extra["retry-after"] = String(Math.max(1, Math.ceil(error.retryAfterMs / 1000)));
  sendJson(res, error.status, error.toBody(), extra);
}

/**
 * Reads a JSON body of at most `limitBytes`. A declared or actual size over the
 * limit is a 413; the connection is then closed after the answer, so the rest
 * of a huge body is never read into memory.
 */
export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const type = req.headers["content-type"];
  // A browser can send text/plain across origins without a preflight; JSON cannot.
  if (type === undefined || !/^application\/json\s*(;|$)/i.test(type)) {
    throw new HttpError(
      415,
      "UNSUPPORTED_MEDIA_TYPE",
      `Send the body as JSON with content-type: application/json (got ${type === undefined ? "none" : JSON.stringify(type)})`,
    );
  }
  const body = await readBody(req, limitBytes);
  if (body === TOO_LARGE) throw tooLarge(limitBytes);
  const text = body.toString("utf8");
  if (text.trim() === "") throw new HttpError(400, "BAD_REQUEST", "The request body is empty; send a JSON object");
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new HttpError(400, "BAD_REQUEST", `The request body is not valid JSON: ${jsonSyntaxProblem(error, text)}`);
  }
}

function tooLarge(limitBytes: number): HttpError {
  return new HttpError(
    413,
    "PAYLOAD_TOO_LARGE",
    `The request body is larger than the gateway's limit of ${limitBytes} bytes (maxBodyBytes)`,
  );
}

export function jsonObject(value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(
      400,
      "BAD_REQUEST",
      `The request body must be a JSON object, got ${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value}`,
    );
  }
  return value as Record<string, unknown>;
}
