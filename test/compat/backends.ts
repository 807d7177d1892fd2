/**
 * The backends the compat suite runs on. Adding a backend is one entry here:
 * how to create a session with the suite's options, and whether it can run on
 * this machine (CI sets the variables that enable the real ones).
 */

import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createEnvironment, type Environment } from "../../src/index.js";
import { sshTestConfig, sshTestEnabled } from "../backends/ssh-env.js";
import { FakeDaytona } from "../fakes/fake-daytona.js";
import { FakeModalClient } from "../fakes/fake-modal.js";

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
    // A real sshd on loopback: scripts/test-env/sshd.sh (run by .ci/run) starts it.
    name: "ssh",
    enabled: sshTestEnabled,
    create: ({ home, env, ...rest } = {}) =>
      createEnvironment({ ...sshTestConfig(), ...rest, env: { ...env, ...(home === undefined ? {} : { HOME: home }) } }),
  },
];

// Apptainer runs through a stand-in executable (Apptainer is not packaged for
// this OS): it records its argv and runs `exec` with bash on the host. It
// needs nothing external, so it always runs. test/backends/apptainer.test.ts
// asserts the argv.
const apptainerStandIn = fileURLToPath(new URL("../fixtures/apptainer-standin/apptainer", import.meta.url));
compatBackends.push({
  name: "apptainer",
  enabled: true,
  create: ({ home, ...rest } = {}) =>
    createEnvironment({
      backend: "apptainer",
      image: "docker://debian:bookworm-slim",
      executable: apptainerStandIn,
      scratchDir: join(tmpdir(), "shellwright-compat-apptainer"),
      ...rest,
      ...(home === undefined ? {} : { homeDir: home }),
    }),
});

// Modal through its adapter, with a FAKE Modal client at the SDK boundary
// (test/fakes/fake-modal.ts): Modal's cloud cannot be reached from here, so
// each sandbox exec runs on this machine. Needs nothing external: always on.
compatBackends.push({
  name: "modal",
  enabled: true,
  create: ({ home, env, ...rest } = {}) =>
    createEnvironment({
      backend: "modal",
      client: new FakeModalClient(),
      ...rest,
      env: { ...env, ...(home === undefined ? {} : { HOME: home }) },
    }),
});

// Daytona through its adapter, with a FAKE Daytona client at the SDK boundary
// (test/fakes/fake-daytona.ts): Daytona's cloud cannot be reached from here, so
// each session command runs with sh on this machine. Always on.
compatBackends.push({
  name: "daytona",
  enabled: true,
  create: ({ home, env, ...rest } = {}) =>
    createEnvironment({
      backend: "daytona",
      client: new FakeDaytona(),
      ...rest,
      env: { ...env, ...(home === undefined ? {} : { HOME: home }) },
    }),
});
