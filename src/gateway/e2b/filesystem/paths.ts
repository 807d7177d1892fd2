/**
 * Where an envd path lands and whose request it is. envd resolves a relative
 * path (and `~`) against the user's home, not against a working directory,
 * and cleans it lexically (`a/../b` is `b`), as Go's filepath.Abs does. The
 * user is the one the sandbox runs as: a Shellwright session is one user, so
 * a request for another one (`root` on E2B) is refused rather than served as
 * someone it is not. The path must lie under the gateway's allowed roots
 * (--allow-root), as every path a request names on the gateway does.
 */

import { posix } from "node:path";
import type { E2bSandbox } from "../sandbox.js";

export class PathProblem extends Error {
  readonly kind: "invalid_path" | "invalid_user" | "outside_roots";
  constructor(kind: PathProblem["kind"], message: string) {
    super(message);
    this.kind = kind;
  }
}

/** The absolute path `path` names in `sandbox` (`name` is the field, for the error). */
export function resolvePath(sandbox: E2bSandbox, path: string, name = "path"): string {
  if (path === "")
    throw new PathProblem("invalid_path", `${name} is empty; give a path (relative ones start at ${sandbox.homeDir})`);
  if (/[\0\n]/.test(path))
    throw new PathProblem(
      "invalid_path",
      `${name} must not contain a NUL byte or a newline, got ${JSON.stringify(path)}`,
    );
  const expanded = path === "~" ? sandbox.homeDir : path.startsWith("~/") ? sandbox.homeDir + path.slice(1) : path;
  const resolved = posix.resolve(sandbox.homeDir, expanded);
  if (sandbox.paths === undefined) return resolved;
  try {
    return sandbox.paths.check(name, resolved);
  } catch (error) {
    throw new PathProblem("outside_roots", error instanceof Error ? error.message : String(error));
  }
}

/** Refuses a user other than the sandbox's own; `undefined` or empty is the sandbox's user. */
export function checkUser(sandbox: E2bSandbox, user: string | undefined): void {
  if (user === undefined || user === "" || user === sandbox.user) return;
  throw new PathProblem("invalid_user", `error looking up user '${user}': this sandbox runs as '${sandbox.user}' only`);
}

/** The user of an envd RPC: `Authorization: Basic base64("user:")`, as E2B's SDK sends it. */
export function rpcUser(header: string | null): string | undefined {
  if (header === null) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0 ? decoded : decoded.slice(0, colon);
}
