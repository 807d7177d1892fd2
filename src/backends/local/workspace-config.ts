/**
 * The local backend's workspace options (docs/branching.md): the directory a
 * checkpoint copies and a rollback restores, and the most it may hold.
 */

import { realpathSync, statSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { InvalidOptionError } from "../../core/errors.js";
import { describe, optionalShellString } from "../../core/options.js";
import { givenWorkspace } from "../shared/workspace-options.js";

export interface WorkspaceOptions {
  /** Absolute, resolved against this process's cwd. */
  root: string;
  maxBytes: number;
}

/** The workspace options, checked where the config enters; undefined without `workspace`. */
export function normalizeWorkspace(raw: Record<string, unknown>): WorkspaceOptions | undefined {
  const workspace = givenWorkspace(raw);
  if (workspace === undefined) return undefined;
  const { given, maxBytes, bad } = workspace;
  // The physical path: `cp -a` and `du` do not follow a symlink given as the root, and the shell's cwd is physical.
  let root: string;
  let isDir = false;
  try {
    root = realpathSync(resolve(given));
    isDir = statSync(root).isDirectory();
  } catch {
    throw bad("does not exist");
  }
  if (!isDir) throw bad("is not a directory");
  // A rollback swaps the root by rename: it needs a parent, and a root that is no mount point of its own.
  if (dirname(root) === root) throw bad("is the filesystem's root; declare a directory below it");
  if (statSync(dirname(root)).dev !== statSync(root).dev)
    throw bad("is a mount point; a rollback swaps the directory by rename, so declare a directory below it");
  // In the sandbox the workspace is an overlay, which only root can mount there (sandbox/overlay.ts).
  if (raw.sandbox !== undefined && raw.sandbox !== false && process.getuid?.() !== 0)
    throw bad(
      "cannot be checkpointed inside the sandbox without root: its overlay needs root to mount (docs/branching.md); leave out `sandbox` or `workspace`",
    );
  // Its changes reach the directory at close; a session that outlives this process (a named one) is never closed here.
  if (raw.sandbox !== undefined && raw.sandbox !== false && raw.outliveOwner === true)
    throw bad(
      "cannot be kept inside the sandbox by a session that outlives this process (a named session, outliveOwner): its changes reach the directory at close, and its sandbox ends with this process; leave out `sandbox` or `workspace`",
    );
  const stateDir = optionalShellString("stateDir", raw.stateDir);
  if (stateDir !== undefined && (inside(resolve(stateDir), root) || inside(physical(resolve(stateDir)), root)))
    throw new InvalidOptionError(
      "stateDir",
      `stateDir ${describe(stateDir)} is inside the workspace ${describe(given)}; a checkpoint would copy itself`,
    );
  return { root, maxBytes };
}

/** `path` with its existing part's symlinks resolved (a state dir may not exist yet). */
function physical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(physical(parent), basename(path));
  }
}

/** True when `path` is `root` or below it. */
export function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}
