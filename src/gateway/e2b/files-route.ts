/**
 * How a `/files` request finds its sandbox and proves it may act on it. With
 * `E2b-Sandbox-Id` (the SDK behind one endpoint for every sandbox) the named
 * sandbox; with its `X-Access-Token` the request is the owner's, without one
 * it must be a signed URL for that sandbox (handleFiles checks it). A signed
 * URL used without the header (a browser given the link) finds its sandbox
 * by its signature: each live sandbox's token is tried.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { E2bError } from "./errors.js";
import { handleFiles } from "./files.js";
import { sameText, sandboxBySignature, signedQuery } from "./files-signature.js";
import type { E2bSandbox } from "./sandbox.js";

export interface FilesRouteContext {
  /** The live sandbox `id`, or undefined. */
  find(id: string): E2bSandbox | undefined;
  /** Every live sandbox. */
  all(): Iterable<E2bSandbox>;
  maxUploadBytes: number;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export async function filesRoute(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  ctx: FilesRouteContext,
): Promise<void> {
  const id = header(req, "e2b-sandbox-id");
  const token = header(req, "x-access-token");
  const query = signedQuery(url);
  let sandbox: E2bSandbox | undefined;
  if (id !== undefined) {
    sandbox = ctx.find(id);
    // What E2B's proxy answers for a sandbox that is gone, which the SDK reads as "not running".
    if (sandbox === undefined)
      throw new E2bError(502, `The sandbox ${JSON.stringify(id)} was not found (killed or timed out)`);
  } else if (token === undefined && query.signature !== undefined) {
    sandbox = sandboxBySignature(ctx.all(), query, req.method === "POST" ? "write" : "read");
    if (sandbox === undefined) throw new E2bError(401, "invalid signature");
  } else {
    throw new E2bError(
      400,
      "Missing the E2b-Sandbox-Id header naming the sandbox (the SDK sends it when sandboxUrl is set), or a signed URL",
    );
  }
  if (token !== undefined && !(token.length > 0 && sameText(token, sandbox.accessToken)))
    throw new E2bError(
      401,
      `Invalid X-Access-Token for sandbox ${JSON.stringify(sandbox.sandboxId)}: send the envdAccessToken its create or connect returned`,
    );
  await handleFiles(req, res, sandbox, { authenticated: token !== undefined, maxUploadBytes: ctx.maxUploadBytes });
}
