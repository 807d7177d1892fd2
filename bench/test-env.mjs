/**
 * The ssh and docker configs the benchmarks use, from the test environment's
 * variables (scripts/test-env/sshd.sh, scripts/test-env/docker.sh);
 * undefined where that environment is not set.
 */

/** The test sshd on loopback, or undefined. */
export function sshBenchConfig(env = process.env) {
  if (!env.SHELLWRIGHT_TEST_SSH_HOST) return undefined;
  return {
    backend: "ssh",
    host: env.SHELLWRIGHT_TEST_SSH_HOST,
    port: Number(env.SHELLWRIGHT_TEST_SSH_PORT),
    user: env.SHELLWRIGHT_TEST_SSH_USER,
    keyPath: env.SHELLWRIGHT_TEST_SSH_KEY,
    knownHostsFile: env.SHELLWRIGHT_TEST_SSH_KNOWN_HOSTS,
    strictHostKeyChecking: "yes",
  };
}

/** The locally built test image without a network, or undefined. */
export function dockerBenchConfig(env = process.env) {
  if (env.SHELLWRIGHT_TEST_DOCKER !== "1") return undefined;
  return { backend: "docker", image: env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm", network: false };
}
