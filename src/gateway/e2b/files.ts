/**
 * envd's `/files` (spec/envd/envd.yaml): GET downloads a whole file (gzip
 * when the client accepts it), POST uploads one or several (multipart or raw
 * bytes), each written atomically with its parents made, so a refused or
 * broken upload leaves the old file as it was. A request the router did not
 * authenticate with the access token must carry a valid, unexpired signature
 * for its path, user and operation (files-signature.ts). Errors are envd's
 * `{code, message}`.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { createGzip } from "node:zlib";
import { FileError, InvalidOptionError } from "../../core/errors.js";
import { files } from "../../sdk/files.js";
import { signatureProblem, signedQuery, type FileOperation } from "./files-signature.js";
import { decodedBody, multipartParts, UploadProblem, type UploadPart } from "./files-upload.js";
import { checkUser, PathProblem, resolvePath } from "./filesystem/paths.js";
import type { E2bSandbox } from "./sandbox.js";
import type { TokenMask } from "../token-mask.js";

export { sandboxBySignature, signedQuery } from "./files-signature.js";

export interface FilesRequestOptions {
  /** True when the router checked the request's X-Access-Token; otherwise a signed URL is required. */
  authenticated: boolean;
  /** The largest upload taken, in bytes (after decompression). */
  maxUploadBytes: number;
}

const FILE_STATUS: Record<FileError["reason"], number> = {
  not_found: 404,
  is_directory: 400,
  not_directory: 400,
  not_regular: 400,
  not_empty: 400,
  denied: 403,
  changed: 409,
  failed: 500,
};

function sendError(res: ServerResponse, status: number, message: string, close = false): void {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify({ code: status, message });
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...(close ? { connection: "close" } : {}),
  });
  res.end(body);
}

function statusOf(error: unknown): { status: number; message: string } {
  if (error instanceof UploadProblem) return { status: error.status, message: error.message };
  if (error instanceof PathProblem)
    return { status: { invalid_user: 401, outside_roots: 403, invalid_path: 400 }[error.kind], message: error.message };
  if (error instanceof FileError) return { status: FILE_STATUS[error.reason], message: error.message };
  if (error instanceof InvalidOptionError) return { status: 400, message: error.message };
  return { status: 500, message: error instanceof Error ? error.message : String(error) };
}

/** Answers a `/files` request for `sandbox`; never throws. */
export async function handleFiles(
  req: IncomingMessage,
  res: ServerResponse,
  sandbox: E2bSandbox,
  options: FilesRequestOptions,
): Promise<void> {
  const controller = new AbortController();
  res.on("close", () => controller.abort());
  try {
    const url = new URL(req.url ?? "/", "http://envd");
    const operation: FileOperation | undefined =
      req.method === "GET" ? "read" : req.method === "POST" ? "write" : undefined;
    if (operation === undefined)
      return sendError(res, 405, `method ${req.method} is not allowed on /files (GET or POST)`);
    const query = signedQuery(url);
    if (!options.authenticated) {
      const problem = signatureProblem(sandbox, query, operation);
      if (problem !== undefined) return sendError(res, 401, problem, !req.complete);
    }
    checkUser(sandbox, query.username);
    const path = url.searchParams.get("path") ?? undefined;
    if (operation === "read") await download(req, res, sandbox, path, controller.signal);
    else await upload(req, res, sandbox, path, options.maxUploadBytes, controller.signal);
  } catch (error) {
    const { status, message } = statusOf(error);
    sendError(res, status, message, !req.complete);
  }
}

async function download(
  req: IncomingMessage,
  res: ServerResponse,
  sandbox: E2bSandbox,
  path: string | undefined,
  signal: AbortSignal,
): Promise<void> {
  const resolved = resolvePath(sandbox, path ?? "");
  const stream = await files(sandbox.session).read(resolved, { format: "stream", signal });
  const gzip = /(^|,)\s*gzip\s*(;\s*q=(?!0(\.0*)?\s*(,|$))[\d.]+)?\s*(,|$)/i.test(req.headers["accept-encoding"] ?? "");
  res.writeHead(200, {
    "content-type": "application/octet-stream",
    "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(resolved.slice(resolved.lastIndexOf("/") + 1))}`,
    ...(gzip ? { "content-encoding": "gzip", vary: "accept-encoding" } : {}),
  });
  const body = Readable.fromWeb(stream as WebReadableStream<Uint8Array>);
  const stages: NodeJS.ReadWriteStream[] = [
    ...(sandbox.tokenMask === undefined ? [] : [masked(sandbox.tokenMask)]),
    ...(gzip ? [createGzip()] : []),
  ];
  // A failure once the bytes flow can only cut the response: the client sees it short, not complete.
  await pipeline([body, ...stages, res]).catch(() => res.destroy());
}

/** The gateway's token masked in a file's bytes, as in a command's output (a file may hold a copy). */
function masked(mask: TokenMask): Transform {
  const stream = mask.byteStream();
  return new Transform({
    transform: (chunk: Buffer, _encoding, done) => done(null, stream.push(chunk)),
    flush: (done) => done(null, stream.end()),
  });
}

async function upload(
  req: IncomingMessage,
  res: ServerResponse,
  sandbox: E2bSandbox,
  path: string | undefined,
  limitBytes: number,
  signal: AbortSignal,
): Promise<void> {
  const metadata = Object.keys(req.headers).find((name) => name.startsWith("x-metadata-"));
  if (metadata !== undefined)
    throw new UploadProblem(400, `file metadata (${metadata}) is not supported by this server`);
  const multipart = /^multipart\/form-data\s*;/i.test(req.headers["content-type"] ?? "");
  let parts: UploadPart[];
  if (multipart) parts = await multipartParts(req, limitBytes, path);
  else {
    if (path === undefined || path === "")
      throw new UploadProblem(400, "path is required in the URL for a raw (application/octet-stream) upload");
    parts = [{ path, data: decodedBody(req, limitBytes) as AsyncIterable<Uint8Array> }];
  }
  const fs = files(sandbox.session);
  const written: { name: string; path: string; type: "file" }[] = [];
  for (const part of parts) {
    const resolved = resolvePath(sandbox, part.path);
    try {
      await fs.write(resolved, part.data, { signal });
    } catch (error) {
      // The body's own failure (over the limit, bad gzip) is what the client needs to hear.
      const cause = error instanceof FileError && error.cause instanceof UploadProblem ? error.cause : error;
      throw cause;
    }
    written.push({ name: resolved.slice(resolved.lastIndexOf("/") + 1), path: resolved, type: "file" });
  }
  const body = JSON.stringify(written);
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
