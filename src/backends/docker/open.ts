/**
 * Opens a docker session: a long-running container, every command a
 * `docker exec`; it starts in /root, or /workspace when a directory is mounted.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { normalizeDockerConfig } from "./config.js";
import { DockerTransport } from "./transport.js";
import { DockerCheckpoints } from "./checkpoint.js";
import { EngineApi, defaultSocketPath } from "./engine.js";
import { redactingTrace } from "./engine-trace.js";
import { normalizeDockerWorkspace } from "./workspace-config.js";

export function openDocker(raw: Record<string, unknown>, forkImage?: string): Promise<Environment> {
  return open(raw, forkImage).then(({ session }) => session);
}

async function open(
  raw: Record<string, unknown>,
  forkImage: string | undefined,
): Promise<{ session: Environment; transport: DockerTransport }> {
  const docker = normalizeDockerConfig(raw, warningSink(raw));
  const workspace = normalizeDockerWorkspace(raw);
  const transport = new DockerTransport(docker);
  const checkpoints = new DockerCheckpoints(
    workspace,
    {
      // Traced as the transport's calls are (secrets masked): a checkpoint's execs and a fork's commit are engine calls too.
      engine: new EngineApi(
        docker.socketPath ?? defaultSocketPath(),
        docker.trace === undefined ? undefined : redactingTrace(docker.trace),
      ),
      containerId: () => transport.containerId,
      tempDir: transport.tempDir,
      endProcesses: () => transport.endProcesses(),
      // A child: the same config from the fork's image, in a container of its own that its close removes.
      openChild: async (image, cwd) => {
        // Not `resume`d: a child is a session of its own (its own id), starting from the cwd it is given.
        const child = await open(
          { ...raw, image, cwd, containerName: undefined, keepContainer: false, resume: undefined },
          image,
        );
        return { env: child.session, containerId: child.transport.containerId };
      },
    },
    forkImage,
  );
  transport.checkpoints = checkpoints;
  transport.afterStop = () => checkpoints.afterStop();
  const session = await Session.open(
    transport,
    sessionOptions(raw, docker.mountCwd === undefined ? "/root" : "/workspace"),
  );
  return { session, transport };
}
