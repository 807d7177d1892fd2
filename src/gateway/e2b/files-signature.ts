/**
 * Signed file URLs (`Sandbox.downloadUrl` / `uploadUrl`): whoever holds one
 * may read or write that one path without the access token. The signature is
 * `v1_` + base64(sha256("path:operation:user:token[:expiry]")) without `=`
 * padding, over the `path` and `username` exactly as the URL carries them
 * (an absent one is empty); an expiry is a Unix time in seconds.
 */

import { createHash, timingSafeEqual } from "node:crypto";
import type { E2bSandbox } from "./sandbox.js";

export type FileOperation = "read" | "write";

export interface SignedQuery {
  path: string;
  username: string;
  signature: string | undefined;
  expiration: string | undefined;
}

export function fileSignature(
  sandbox: Pick<E2bSandbox, "accessToken">,
  query: Pick<SignedQuery, "path" | "username" | "expiration">,
  operation: FileOperation,
): string {
  const parts = [query.path, operation, query.username, sandbox.accessToken];
  if (query.expiration !== undefined) parts.push(query.expiration);
  return `v1_${createHash("sha256").update(parts.join(":")).digest("base64").replace(/=+$/, "")}`;
}

/** Hashes both sides first, so the comparison takes the same time whatever the lengths. */
export function sameText(a: string, b: string): boolean {
  return timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest());
}

/** Why a signed request is refused, or undefined when its signature is good and not expired. */
export function signatureProblem(
  sandbox: Pick<E2bSandbox, "accessToken">,
  query: SignedQuery,
  operation: FileOperation,
  nowMs: number = Date.now(),
): string | undefined {
  if (query.signature === undefined || query.signature === "")
    return "this sandbox is secured: send X-Access-Token or a signed URL (signature)";
  if (query.expiration !== undefined && !/^-?\d{1,16}$/.test(query.expiration))
    return `signature_expiration must be a Unix time in seconds, got ${JSON.stringify(query.expiration.slice(0, 40))}`;
  if (!sameText(query.signature, fileSignature(sandbox, query, operation))) return "invalid signature";
  if (query.expiration !== undefined && Number(query.expiration) * 1000 < nowMs) return "signature is already expired";
  return undefined;
}

/**
 * The sandbox a signed URL belongs to, for a request that names none (one
 * envd endpoint for every sandbox, the SDK's `sandboxUrl`): each sandbox's
 * token is tried against the signature. Expiry is not judged here.
 */
export function sandboxBySignature<S extends Pick<E2bSandbox, "accessToken">>(
  sandboxes: Iterable<S>,
  query: SignedQuery,
  operation: FileOperation,
): S | undefined {
  if (query.signature === undefined || query.signature === "") return undefined;
  let found: S | undefined;
  // Every sandbox is tried, the match or not, so the time says nothing about which one matched.
  for (const sandbox of sandboxes) {
    if (sameText(query.signature, fileSignature(sandbox, query, operation)) && found === undefined) found = sandbox;
  }
  return found;
}

/** The signature fields of a `/files` URL. */
export function signedQuery(url: URL): SignedQuery {
  const get = (name: string): string | undefined => url.searchParams.get(name) ?? undefined;
  return {
    path: get("path") ?? "",
    username: get("username") ?? "",
    signature: get("signature"),
    expiration: get("signature_expiration"),
  };
}
