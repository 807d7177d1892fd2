/**
 * Ends every test run with one line saying which backends the run covered and
 * how to run the rest: the docker and ssh tests skip without a word when their
 * servers are absent, and a green run on a bare machine must not pass for a
 * full one. The rules mirror the `enabled` flags in test/compat/backends.ts.
 */

import type { Reporter, TestRunEndReason } from "vitest/node";

interface BackendState {
  name: string;
  enabled: boolean;
  /** How to enable it, said when it was skipped. */
  howTo: string;
}

export function backendStates(env: NodeJS.ProcessEnv = process.env): BackendState[] {
  return [
    { name: "local", enabled: true, howTo: "" },
    { name: "gateway", enabled: env.SHELLWRIGHT_TEST_GATEWAY !== "0", howTo: "unset SHELLWRIGHT_TEST_GATEWAY" },
    {
      name: "ssh",
      enabled: env.SHELLWRIGHT_TEST_SSH === "1",
      howTo: 'eval "$(bash scripts/test-env/sshd.sh start)"',
    },
    {
      name: "docker",
      enabled: env.SHELLWRIGHT_TEST_DOCKER === "1",
      howTo: "bash scripts/test-env/docker.sh && export SHELLWRIGHT_TEST_DOCKER=1",
    },
  ];
}

/** The line itself, e.g. "Backends: ran local, gateway; skipped ssh (…), docker (…); …". */
export function backendSummary(env: NodeJS.ProcessEnv = process.env): string {
  const only = env.SHELLWRIGHT_TEST_BACKENDS?.trim();
  if (only)
    return `Backends: only ${only.split(",").join(", ")} in the per-backend suites (SHELLWRIGHT_TEST_BACKENDS); unset it to run every enabled backend.`;
  const states = backendStates(env);
  const ran = states.filter((s) => s.enabled).map((s) => s.name);
  // Always run: stand-ins for the SDK and apptainer backends, and local bash reached as remote backends are.
  ran.push("apptainer/modal/daytona stand-ins", "remote-style");
  const skipped = states.filter((s) => !s.enabled);
  if (skipped.length === 0) return `Backends: ran ${ran.join(", ")}; none skipped.`;
  return (
    `Backends: ran ${ran.join(", ")}; skipped ${skipped.map((s) => `${s.name} (${s.howTo})`).join(", ")}. ` +
    "bash .ci/run installs and starts the Docker Engine and sshd and runs everything."
  );
}

export class BackendSummaryReporter implements Reporter {
  onTestRunEnd(_modules: unknown, _errors: unknown, reason: TestRunEndReason): void {
    if (reason === "interrupted") return;
    process.stdout.write(`\n${backendSummary()}\n`);
  }
}
