/**
 * The backends the compat suite runs on. Adding a backend is one row of the
 * table here: how to create a session with the suite's options and a given
 * fast-path setting, and whether it can run on this machine (CI sets the
 * variables that enable the real ones). Each row gives two entries, with the
 * fast path and without (`-plain`).
 */

import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createEnvironment,
  startGateway,
  type Environment,
  type EnvironmentConfig,
  type Gateway,
} from "../../src/index.js";
import { sshTestConfig, sshTestEnabled } from "../backends/ssh/ssh-env.js";
import { removeDockerContainers } from "../../src/backends/docker/containers.js";
import { FakeDaytona } from "../fakes/fake-daytona.js";
import { FakeModalClient } from "../fakes/fake-modal.js";
import { HAVE_BWRAP } from "../backends/local/sandbox/fixture.js";

/**
 * The port the suite's servers listen on (test/compat/sdk.test.ts): the modal entries declare it at
 * creation, as Modal needs. From the pid, so that two runs on one machine do not meet.
 */
export const COMPAT_PORT = 20000 + (process.pid % 25000);

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
  /**
   * The same backend as one config for createEnvironmentPool (test/compat/pool.test.ts):
   * without the suite's shared container, since every member needs its own.
   * Absent for a backend with no config of its own (a test transport).
   */
  poolConfig?(): Promise<EnvironmentConfig>;
  /**
   * Each session has a pid namespace of its own (the local sandbox): another
   * session cannot see its processes by pid, so the checks that look from a
   * second session do not apply (the sandbox's own tests prove close() there).
   */
  ownPidNamespace?: true;
}

/**
 * One backend of the table below. Each runs twice: with the fast path on (the default: calls run through the
 * helper once it is ready, docs/fast-path.md) as `<name>`, and forced off (every call a fresh bash) as
 * `<name>-plain`.
 */
interface BackendRow {
  name: string;
  enabled: boolean;
  ownPidNamespace?: true;
  create(options: CompatOptions, fastPath: boolean): Promise<Environment>;
  poolConfig(fastPath: boolean): Promise<EnvironmentConfig>;
}

const backendTable: BackendRow[] = [
  {
    name: "local",
    enabled: true,
    poolConfig: (fastPath) => Promise.resolve({ backend: "local", fastPath }),
    create: ({ home, env, ...rest }, fastPath) =>
      createEnvironment({ backend: "local", fastPath, ...rest, env: withHome(env, home) }),
  },
  {
    // The local sandbox (docs/sandbox.md): each call runs inside the session's bwrap (plain: each call enters
    // it with nsenter itself).
    name: "local-sandbox",
    enabled: HAVE_BWRAP,
    ownPidNamespace: true,
    poolConfig: (fastPath) => Promise.resolve({ backend: "local", sandbox: true, fastPath }),
    create: createSandboxedSession,
  },
  {
    // gateway → serve → local, over real loopback HTTP (needs nothing external). The plain entry's server runs
    // its local sessions with the fast path off (the server's operator chooses it; a client cannot).
    name: "gateway",
    enabled: process.env.SHELLWRIGHT_TEST_GATEWAY !== "0",
    create: createGatewaySession,
    poolConfig: gatewayConfig,
  },
  {
    // A real sshd on loopback: scripts/test-env/sshd.sh (run by .ci/run) starts it. Plain: every call its own
    // `ssh` command over the master.
    name: "ssh",
    enabled: sshTestEnabled,
    poolConfig: (fastPath) => Promise.resolve({ ...sshTestConfig(), fastPath }),
    create: ({ home, env, ...rest }, fastPath) =>
      createEnvironment({ ...sshTestConfig(), fastPath, ...rest, env: withHome(env, home) }),
  },
  {
    // A real Docker Engine: scripts/test-env/docker.sh (run by .ci/run) starts it and builds the image. Fast:
    // calls run through the helper copied into the container; plain: every call its own Engine API exec.
    name: "docker",
    enabled: process.env.SHELLWRIGHT_TEST_DOCKER === "1",
    create: createDockerSession,
    poolConfig: (fastPath) => Promise.resolve(dockerConfig(fastPath)),
  },
  {
    // Apptainer runs through a stand-in executable (Apptainer is not packaged for this OS): it records its argv
    // and runs `exec` with bash on the host, so it needs nothing external. test/backends/apptainer.test.ts
    // asserts the argv.
    name: "apptainer",
    enabled: true,
    poolConfig: (fastPath) => Promise.resolve(apptainerConfig(fastPath)),
    create: ({ home, ...rest }, fastPath) =>
      createEnvironment({ ...apptainerConfig(fastPath), ...rest, ...(home === undefined ? {} : { homeDir: home }) }),
  },
  {
    // Modal through its adapter, with a FAKE Modal client at the SDK boundary (test/fakes/fake-modal.ts): Modal's
    // cloud cannot be reached from here, so each sandbox exec runs on this machine.
    name: "modal",
    enabled: true,
    poolConfig: (fastPath) => Promise.resolve({ backend: "modal", client: new FakeModalClient(), fastPath }),
    create: ({ home, env, ...rest }, fastPath) =>
      createEnvironment({
        backend: "modal",
        client: new FakeModalClient(),
        fastPath,
        ports: [COMPAT_PORT],
        ...rest,
        env: withHome(env, home),
      }),
  },
  {
    // Daytona through its adapter, with a FAKE Daytona client at the SDK boundary (test/fakes/fake-daytona.ts):
    // Daytona's cloud cannot be reached from here, so each session command runs with sh on this machine.
    name: "daytona",
    enabled: true,
    poolConfig: (fastPath) => Promise.resolve({ backend: "daytona", client: new FakeDaytona(), fastPath }),
    create: ({ home, env, ...rest }, fastPath) =>
      createEnvironment({ backend: "daytona", client: new FakeDaytona(), fastPath, ...rest, env: withHome(env, home) }),
  },
  {
    // E2B's own SDK over real loopback HTTP against `serve --api e2b` on the local backend (no stand-in): the
    // sandbox is this machine. Plain: every call its own E2B command (the server's sessions keep the fast path).
    name: "e2b",
    enabled: process.env.SHELLWRIGHT_TEST_GATEWAY !== "0",
    poolConfig: (fastPath) => e2bConfig(fastPath),
    create: async ({ home, env, ...rest }, fastPath) =>
      createEnvironment({ ...(await e2bConfig(fastPath)), ...rest, env: withHome(env, home) }),
  },
];

/** Each row twice, `<name>` and `<name>-plain`; an entry SHELLWRIGHT_TEST_BACKENDS leaves out is disabled. */
export const compatBackends: CompatBackend[] = backendTable.flatMap((row) =>
  [true, false].map((fastPath): CompatBackend => {
    const name = fastPath ? row.name : `${row.name}-plain`;
    return {
      name,
      enabled: row.enabled && backendSelected(name),
      create: (options = {}) => row.create(options, fastPath),
      poolConfig: () => row.poolConfig(fastPath),
      ...(row.ownPidNamespace ? { ownPidNamespace: true as const } : {}),
    };
  }),
);

/**
 * SHELLWRIGHT_TEST_BACKENDS=a,b,… runs the per-backend suites on those
 * entries only (names as above, and "remote-style"): CI's second Node version
 * runs the ones whose JavaScript meets that runtime differently (the local
 * spawns and the gateway's HTTP), not every backend again.
 */
export function backendSelected(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const only = env.SHELLWRIGHT_TEST_BACKENDS;
  if (only === undefined || only.trim() === "") return true;
  return only
    .split(",")
    .map((entry) => entry.trim())
    .includes(name);
}

const GATEWAY_TOKEN = `compat-${Math.random().toString(16).slice(2)}-${Date.now()}`;
const gatewaysStarted = new Map<string, Promise<Gateway>>();

/**
 * One gateway per test file and kind, started on first use, on a free loopback port: Shellwright's own API with
 * the fast path on or off, or E2B's API (its sessions always on the fast path).
 */
function sharedGateway(kind: "fast" | "plain" | "e2b"): Promise<Gateway> {
  let started = gatewaysStarted.get(kind);
  if (started === undefined) {
    started = startGateway({
      token: GATEWAY_TOKEN,
      port: 0,
      allowedRoots: ["/"],
      ...(kind === "e2b" ? { apis: ["e2b" as const] } : {}),
      backend: { backend: "local", fastPath: kind !== "plain" },
    }).then((gateway) => {
      gateway.server.unref();
      return gateway;
    });
    gatewaysStarted.set(kind, started);
  }
  return started;
}

async function e2bConfig(fastPath: boolean): Promise<EnvironmentConfig> {
  const { url } = await sharedGateway("e2b");
  // The shared serve is local-backed, where E2B's fork and snapshots are refused (a fork there would share the
  // host's files): checkpoints of the shell state. Those of the whole sandbox run against a docker-backed serve in
  // test/backends/e2b/branching.test.ts.
  return { backend: "e2b", apiKey: GATEWAY_TOKEN, apiUrl: url, sandboxUrl: url, fastPath, checkpoints: "shell" };
}

async function gatewayConfig(fastPath: boolean): Promise<EnvironmentConfig> {
  const gateway = await sharedGateway(fastPath ? "fast" : "plain");
  return { backend: "gateway", url: gateway.url, token: GATEWAY_TOKEN };
}

async function createGatewaySession(
  { home, env, ...rest }: CompatOptions = {},
  fastPath: boolean,
): Promise<Environment> {
  const gateway = await sharedGateway(fastPath ? "fast" : "plain");
  return createEnvironment({
    backend: "gateway",
    url: gateway.url,
    token: GATEWAY_TOKEN,
    ...rest,
    env: withHome(env, home),
  });
}

/** The host's /tmp is writable in the sandbox so that the suite's scratch dirs outlive one session, as on the host. */
function createSandboxedSession(
  { home, env, cwd, ...rest }: CompatOptions = {},
  fastPath: boolean,
): Promise<Environment> {
  return createEnvironment({
    backend: "local",
    fastPath,
    ...rest,
    ...(cwd === undefined ? {} : { cwd }),
    sandbox: { writable: [cwd ?? ".", "/tmp", ...(home === undefined ? [] : [home])] },
    env: withHome(env, home),
  });
}

/**
 * The suite's sessions share a filesystem (a profile written by one is loaded
 * by the next), so on docker they share one container: kept while any session
 * is open, removed when the last one closes.
 */
const dockerCompat = { name: `shellwright-compat-${process.pid}`, open: 0 };

/** The suite needs no network; sparing dockerd's bridge code sidesteps a teardown deadlock seen in 20.10. */
const dockerConfig = (fastPath: boolean) => ({
  backend: "docker" as const,
  fastPath,
  image: process.env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm",
  network: false,
});

async function createDockerSession({ home, env, ...rest }: CompatOptions = {}, fastPath = true): Promise<Environment> {
  const session = await createEnvironment({
    ...dockerConfig(fastPath),
    containerName: dockerCompat.name,
    keepContainer: true,
    ...rest,
    env: withHome(env, home),
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

/** The suite's HOME as the session's HOME variable, beside the suite's other variables. */
function withHome(env: Record<string, string> | undefined, home: string | undefined): Record<string, string> {
  return { ...env, ...(home === undefined ? {} : { HOME: home }) };
}

const apptainerStandIn = fileURLToPath(new URL("../fixtures/apptainer-standin/apptainer", import.meta.url));
const apptainerConfig = (fastPath: boolean): EnvironmentConfig => ({
  backend: "apptainer",
  image: "docker://debian:bookworm-slim",
  executable: apptainerStandIn,
  scratchDir: join(tmpdir(), "shellwright-compat-apptainer"),
  fastPath,
});
