/**
 * Where a sandboxed session's workspace may lie (overlay.ts): the overlay
 * mounted over its root covers every mount below it, so no writable root and
 * no hidden or denied path may lie strictly inside it (the overlay would show
 * the host's files there instead).
 */

import { InvalidOptionError } from "../../../core/errors.js";
import { inside } from "../workspace-config.js";
import type { ResolvedSandbox } from "./config.js";

/** The root, when nothing the sandbox mounts lies inside it; else an InvalidOptionError naming both. */
export function checkWorkspace(root: string, sandbox: ResolvedSandbox, covered: string[]): string {
  const below = (path: string): boolean => path !== root && inside(path, root);
  const writable = sandbox.writable.find(below);
  if (writable !== undefined)
    throw new InvalidOptionError(
      "workspace",
      `workspace ${root} holds the writable root ${writable} of sandbox.writable; the workspace's overlay would cover it: list the workspace itself instead`,
    );
  const hidden = covered.find(below);
  if (hidden !== undefined)
    throw new InvalidOptionError(
      "workspace",
      `workspace ${root} holds ${hidden}, which the sandbox hides (sandbox.denyRead, or Shellwright's own files); the workspace's overlay would show it: declare a directory that does not hold it`,
    );
  return root;
}
