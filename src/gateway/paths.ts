/**
 * Which directories a request may name. Requests choose only a cwd (for the
 * session or one call); it must be an absolute path under one of the roots the
 * server was configured with. Every other path (state dir, bash, mounts) comes
 * from the server's config alone.
 *
 * This bounds what the API lets a caller point at; it is not a sandbox: a
 * command can still `cd` anywhere the backend lets it. The token is the
 * boundary for that.
 */

import { realpathSync } from "node:fs";
import { posix } from "node:path";
import { HttpError } from "./http.js";

export class PathPolicy {
  readonly roots: readonly string[];
  readonly #hostPaths: boolean;

  /**
   * @param roots absolute directories
   * @param hostPaths true when paths name this machine's files (the local
   *   backend): symlinks are then resolved before the check.
   */
  constructor(roots: readonly string[], hostPaths: boolean) {
    if (roots.length === 0) throw new TypeError("allowedRoots must name at least one directory");
    for (const root of roots) {
      if (!posix.isAbsolute(root))
        throw new TypeError(`allowedRoots must be absolute paths, got ${JSON.stringify(root)}`);
    }
    this.#hostPaths = hostPaths;
    this.roots = roots.map((root) => (hostPaths ? realOrSelf(posix.resolve(root)) : posix.resolve(root)));
  }

  /** Returns the normalised path, or throws a 403 that names the field. */
  check(field: string, value: string): string {
    if (!posix.isAbsolute(value)) {
      throw new HttpError(
        400,
        "INVALID_OPTION",
        `${field} must be an absolute path (no ~ or relative paths), got ${JSON.stringify(value)}`,
        { option: field },
      );
    }
    const lexical = posix.resolve(value);
    const candidates = this.#hostPaths ? [lexical, realOrSelf(lexical)] : [lexical];
    if (candidates.every((path) => this.roots.some((root) => within(path, root)))) return lexical;
    throw new HttpError(
      403,
      "FORBIDDEN",
      `${field} ${JSON.stringify(value)} is outside the gateway's allowed roots (${this.roots.join(", ")})`,
      { option: field },
    );
  }
}

function within(path: string, root: string): boolean {
  return root === "/" || path === root || path.startsWith(`${root}/`);
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // does not exist (yet): the lexical check stands, and cd will fail with 126
  }
}
