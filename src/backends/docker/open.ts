/**
 * Opens a docker session: a long-running container, every command a
 * `docker exec`; it starts in /root, or /workspace when a directory is mounted.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { normalizeDockerConfig } from "./config.js";
import { DockerTransport } from "./transport.js";

export function openDocker(raw: Record<string, unknown>): Promise<Environment> {
  const docker = normalizeDockerConfig(raw, warningSink(raw));
  return Session.open(
    new DockerTransport(docker),
    sessionOptions(raw, docker.mountCwd === undefined ? "/root" : "/workspace"),
  );
}
