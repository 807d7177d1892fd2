/**
 * The docker backend's workspace options (docs/branching.md): a directory in
 * the container that checkpoints copy and rollbacks restore, and the most it
 * may hold. Only its form is checked here; where it lies in the container
 * (its own filesystem, no mount) is checked in the container, by each
 * checkpoint and fork (checkpoint-scripts.ts).
 */

import { posix } from "node:path";
import { givenWorkspace } from "../shared/workspace-options.js";
import { DOCKER_TEMP_DIR } from "./config.js";

export interface DockerWorkspace {
  /** An absolute path in the container, normalised, never `/`. */
  root: string;
  maxBytes: number;
}

/** The workspace options, checked where the config enters; undefined without `workspace`. */
export function normalizeDockerWorkspace(raw: Record<string, unknown>): DockerWorkspace | undefined {
  const workspace = givenWorkspace(raw);
  if (workspace === undefined) return undefined;
  const { given, maxBytes, bad } = workspace;
  if (!given.startsWith("/")) throw bad("must be an absolute path in the container, e.g. /work");
  const root = posix.normalize(given).replace(/\/+$/, "");
  // A rollback swaps the root by rename: it needs a parent.
  if (root === "") throw bad("is the container's root; declare a directory below it");
  // The session's state, its checkpoints and the helper live in the temp dir: a workspace holding it would copy
  // every checkpoint into itself, and a rollback would rename the session's own state away.
  if (`${DOCKER_TEMP_DIR}/`.startsWith(`${root}/`))
    throw bad(
      `holds the session's temp dir ${DOCKER_TEMP_DIR} (its state and checkpoints); declare a directory apart from it, e.g. /work`,
    );
  return { root, maxBytes };
}
