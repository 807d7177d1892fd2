/** A session of a compat backend in which git works: the test image has no git, so docker binds in the host's. */

import { createEnvironment, type Environment } from "../../src/index.js";
import type { CompatBackend } from "../compat/backends.js";

/** The host's git (the same Debian release as the test image), bound in read-only. */
export const GIT_VOLUMES = ["/usr/bin/git:/usr/bin/git:ro", "/usr/lib/git-core:/usr/lib/git-core:ro"];

export function sessionWithGit(backend: CompatBackend, env?: Record<string, string>): Promise<Environment> {
  if (!backend.name.startsWith("docker")) return backend.create({ timeoutMs: 60_000, ...(env ? { env } : {}) });
  return createEnvironment({
    backend: "docker",
    image: process.env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm",
    fastPath: backend.name === "docker",
    network: false,
    volumes: GIT_VOLUMES,
    timeoutMs: 60_000,
    ...(env ? { env } : {}),
  });
}
