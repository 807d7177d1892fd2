/**
 * The backends the compat suite runs on. Adding a backend is one entry here:
 * how to create a session with the suite's options, and whether it can run on
 * this machine (CI sets the variables that enable the real ones).
 */

import { createEnvironment, type Environment } from "../../src/index.js";
import { removeDockerContainers } from "../../src/backends/docker/containers.js";

export interface CompatOptions {
  /** HOME for the session's login shell (a profile written there is loaded at init). */
  home?: string;
  /** Extra variables in the environment the session starts from. */
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
  initTimeoutMs?: number;
  killGraceMs?: number;
  onWarning?: (message: string) => void;
}

export interface CompatBackend {
  name: string;
  enabled: boolean;
  create(options?: CompatOptions): Promise<Environment>;
}

export const compatBackends: CompatBackend[] = [
  {
    name: "local",
    enabled: true,
    create: ({ home, env, ...rest } = {}) =>
      createEnvironment({ backend: "local", ...rest, env: { ...env, ...(home === undefined ? {} : { HOME: home }) } }),
  },
  {
    name: "docker",
    enabled: process.env.SHELLWRIGHT_TEST_DOCKER === "1",
    create: (options) => createDockerSession(options),
  },
];

/**
 * The suite's sessions share a filesystem (a profile written by one is loaded
 * by the next), so on docker they share one container: kept while any session
 * is open, removed when the last one closes.
 */
const dockerCompat = { name: `shellwright-compat-${process.pid}`, open: 0 };

async function createDockerSession({ home, env, ...rest }: CompatOptions = {}): Promise<Environment> {
  const session = await createEnvironment({
    backend: "docker",
    image: process.env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm",
    containerName: dockerCompat.name,
    keepContainer: true,
    // The suite needs no network; sparing dockerd's bridge code sidesteps a teardown deadlock seen in 20.10.
    network: false,
    ...rest,
    env: { ...env, ...(home === undefined ? {} : { HOME: home }) },
  });
  dockerCompat.open++;
  const close = session.close.bind(session);
  let closed = false;
  session.close = async () => {
    await close();
    if (closed) return;
    closed = true;
    if (--dockerCompat.open === 0) await removeDockerContainers([dockerCompat.name]);
  };
  return session;
}
