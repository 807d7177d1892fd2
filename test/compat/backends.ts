/**
 * The backends the compat suite runs on. Adding a backend is one entry here:
 * how to create a session with the suite's options, and whether it can run on
 * this machine (CI sets the variables that enable the real ones).
 */

import { createEnvironment, startGateway, type Environment, type Gateway } from "../../src/index.js";
import { sshTestConfig, sshTestEnabled } from "../backends/ssh-env.js";

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
    // gateway → serve → local, over real loopback HTTP (needs nothing external).
    name: "gateway",
    enabled: process.env.SHELLWRIGHT_TEST_GATEWAY !== "0",
    create: async ({ home, env, ...rest } = {}) => {
      const gateway = await sharedGateway();
      return createEnvironment({
        backend: "gateway",
        url: gateway.url,
        token: GATEWAY_TOKEN,
        ...rest,
        env: { ...env, ...(home === undefined ? {} : { HOME: home }) },
      });
    },
  },
  {
    // A real sshd on loopback: scripts/test-env/sshd.sh (run by .ci/run) starts it.
    name: "ssh",
    enabled: sshTestEnabled,
    create: ({ home, env, ...rest } = {}) =>
      createEnvironment({ ...sshTestConfig(), ...rest, env: { ...env, ...(home === undefined ? {} : { HOME: home }) } }),
  },
];

const GATEWAY_TOKEN = `compat-${Math.random().toString(16).slice(2)}-${Date.now()}`;
let gatewayStarted: Promise<Gateway> | undefined;

/** One gateway per test file, started on first use, on a free loopback port. */
function sharedGateway(): Promise<Gateway> {
  gatewayStarted ??= startGateway({ token: GATEWAY_TOKEN, port: 0, allowedRoots: ["/"], backend: { backend: "local" } }).then((gateway) => {
    gateway.server.unref();
    return gateway;
  });
  return gatewayStarted;
}
