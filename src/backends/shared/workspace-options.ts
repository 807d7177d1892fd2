/**
 * The `workspace` and `workspaceMaxBytes` options as every backend with a
 * workspace takes them (docs/branching.md); each backend then checks the
 * root its own way (a host path, a path in a container).
 */

import { InvalidOptionError } from "../../core/errors.js";
import { describe, optionalShellString, positiveInteger } from "../../core/options.js";

/** 1 GiB: a checkpoint is a full copy where the filesystem cannot share blocks (reflink, overlayfs). */
export const DEFAULT_WORKSPACE_MAX_BYTES = 1024 ** 3;

export interface GivenWorkspace {
  /** The `workspace` option as given. */
  given: string;
  maxBytes: number;
  /** An InvalidOptionError naming `workspace` and its value, saying `why`. */
  bad(why: string): InvalidOptionError;
}

/** Undefined without `workspace` (and then `workspaceMaxBytes` is refused: it would apply to nothing). */
export function givenWorkspace(raw: Record<string, unknown>): GivenWorkspace | undefined {
  const given = optionalShellString("workspace", raw.workspace);
  const maxBytes = positiveInteger("workspaceMaxBytes", raw.workspaceMaxBytes, DEFAULT_WORKSPACE_MAX_BYTES);
  if (given === undefined) {
    if (raw.workspaceMaxBytes !== undefined)
      throw new InvalidOptionError(
        "workspaceMaxBytes",
        `workspaceMaxBytes ${describe(raw.workspaceMaxBytes)} needs a workspace to apply to; add \`workspace\``,
      );
    return undefined;
  }
  return { given, maxBytes, bad: (why) => new InvalidOptionError("workspace", `workspace ${describe(given)} ${why}`) };
}
