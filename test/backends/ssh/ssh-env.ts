/**
 * Where the tests' own sshd is: scripts/test-env/sshd.sh exports these
 * variables (`eval "$(scripts/test-env/sshd.sh start)"`), and .ci/run does so.
 */

import type { SshConfig } from "../../../src/index.js";

export const sshTestEnabled = process.env.SHELLWRIGHT_TEST_SSH === "1";

function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(
      `SHELLWRIGHT_TEST_SSH=1 but ${name} is not set: run \`eval "$(scripts/test-env/sshd.sh start)"\` first`,
    );
  return value;
}

/** A config for the test sshd; the host key is checked strictly against the server's own known_hosts file. */
export function sshTestConfig(): SshConfig {
  return {
    backend: "ssh",
    host: required("SHELLWRIGHT_TEST_SSH_HOST"),
    port: Number(required("SHELLWRIGHT_TEST_SSH_PORT")),
    user: required("SHELLWRIGHT_TEST_SSH_USER"),
    keyPath: required("SHELLWRIGHT_TEST_SSH_KEY"),
    knownHostsFile: required("SHELLWRIGHT_TEST_SSH_KNOWN_HOSTS"),
    strictHostKeyChecking: "yes",
  };
}
