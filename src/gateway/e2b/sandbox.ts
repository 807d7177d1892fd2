/**
 * One E2B sandbox as serve's E2B API holds it: a Shellwright session and what
 * E2B's clients know it by. The control API makes them; envd's services
 * (process, filesystem, /files) find theirs through the request's context.
 */

import { createContextKey } from "@connectrpc/connect";
import type { Environment } from "../../core/environment.js";
import type { PathPolicy } from "../paths.js";
import type { TokenMask } from "../token-mask.js";

export interface E2bSandbox {
  readonly sandboxId: string;
  /** The Shellwright session every envd request of this sandbox acts on. */
  readonly session: Environment;
  /** What envd requests carry as X-Access-Token, and what signed file URLs are signed with. */
  readonly accessToken: string;
  /** The sandbox's user (E2B's `user`) and its home, where relative paths start. */
  readonly user: string;
  readonly homeDir: string;
  /** The gateway's allowed roots (--allow-root): every path a request names must lie under one. */
  readonly paths?: PathPolicy | undefined;
  /** The gateway's token, masked in what a file read sends back as in a command's output. */
  readonly tokenMask?: TokenMask | undefined;
}

/** The sandbox an envd RPC is for, authenticated before the handler runs (set by the E2B API's router). */
export const SANDBOX = createContextKey<E2bSandbox | undefined>(undefined, { description: "e2b sandbox" });
