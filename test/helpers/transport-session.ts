/**
 * Sessions opened over a transport the test holds (local, docker, ssh), for the tests that reach the transport's
 * own parts: its fast-path runner, its helper, its ssh master. Each session is closed after the test that opened it.
 */

import { Session } from "../../src/core/session.js";
import { sessionOptions } from "../../src/backends/shared/config.js";
import { normalizeDockerConfig } from "../../src/backends/docker/config.js";
import { DockerTransport } from "../../src/backends/docker/transport.js";
import { normalizeLocalConfig } from "../../src/backends/local/config.js";
import { LocalTransport } from "../../src/backends/local/transport.js";
import { normalizeSshConfig } from "../../src/backends/ssh/config.js";
import { SshTransport } from "../../src/backends/ssh/transport.js";
import { sshTestConfig, sshTestEnabled } from "../backends/ssh/ssh-env.js";
import { closeAfterEach } from "./close-after-each.js";
import { DOCKER_TEST_ENABLED, DOCKER_TEST_IMAGE } from "./docker-test.js";

interface Transports {
  local: LocalTransport;
  docker: DockerTransport;
  ssh: SshTransport;
}
export type TransportBackend = keyof Transports;

/** Whether the backend can run here (docker and ssh need the engine and the sshd the test setup starts). */
export const TRANSPORT_ENABLED: Readonly<Record<TransportBackend, boolean>> = {
  local: true,
  docker: DOCKER_TEST_ENABLED,
  ssh: sshTestEnabled,
};

/** The session's first cwd: the docker test image's home, else /tmp. */
const CWD: Readonly<Record<TransportBackend, string>> = { local: "/tmp", docker: "/root", ssh: "/tmp" };

/** `fastPathHelper` is not a config option (the config refuses it): it goes to the transport beside the config. */
function transportOf<B extends TransportBackend>(backend: B, options: Record<string, unknown>): Transports[B] {
  const { fastPathHelper, ...rest } = options;
  const helper = typeof fastPathHelper === "string" ? { fastPathHelper } : {};
  const ignore = () => undefined;
  const transports: { [K in TransportBackend]: () => Transports[K] } = {
    local: () => new LocalTransport({ ...normalizeLocalConfig(rest), ...helper }),
    docker: () =>
      new DockerTransport(normalizeDockerConfig({ image: DOCKER_TEST_IMAGE, network: false, ...rest }, ignore)),
    ssh: () => new SshTransport({ ...normalizeSshConfig({ ...sshTestConfig(), ...rest }, ignore), ...helper }),
  };
  return transports[backend]();
}

export interface TransportSession<B extends TransportBackend> {
  session: Session;
  transport: Transports[B];
}

/**
 * Opens a session of `backend` over a new transport (`options`: the backend's config beside the test's defaults),
 * with `timeoutMs` as its calls' default. The caller closes it (a pool closes its members).
 */
export async function openTransportSession<B extends TransportBackend>(
  backend: B,
  options: Record<string, unknown> = {},
  timeoutMs = 30_000,
): Promise<TransportSession<B>> {
  const transport = transportOf(backend, options);
  return { session: await Session.open(transport, sessionOptions({ timeoutMs }, CWD[backend])), transport };
}

/** Call it at the top of a test file: openTransportSession, each session closed after the test that opened it. */
export function transportSessions(): typeof openTransportSession {
  const keep = closeAfterEach((session: Session) => session.close());
  return async (backend, options, timeoutMs) => {
    const opened = await openTransportSession(backend, options, timeoutMs);
    keep(opened.session);
    return opened;
  };
}
