/**
 * Shellwright's stand-in for E2B's `tests/setup.ts` (not E2B's file): the
 * fixtures the vendored tests import. Each test file gets its own
 * `shellwright serve --api e2b`, started before its tests run; the SDK finds it
 * through its own environment variables (E2B_API_URL, E2B_SANDBOX_URL,
 * E2B_API_KEY), as it would find E2B, so tests that call `Sandbox.create` or
 * `Sandbox.connect` themselves reach it too. The variables are restored after
 * the file.
 *
 * A sandbox's home is the directory serve starts sessions in: E2B's home,
 * `/home/user`, when that directory exists (CI creates it; a test never does),
 * else `/tmp`, and then the files that assume E2B's home skip their tests
 * saying so. Sandboxes share that home, so tests take turns (home-lock.ts). Tests this server does not pass by design are skipped by name
 * (skips.ts).
 */

import { existsSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeEach, expect, test as base } from "vitest";
import { Sandbox, type SandboxOpts } from "e2b";
import { startTestGateway, TOKEN } from "../../../gateway/helpers.js";
import { withHome } from "./home-lock.js";
import { DOCKER_BOUND, E2B_DOCKER_IMAGE, E2B_HOME, HOME_BOUND, NO_DOCKER, SKIPPED } from "./skips.js";

const HERE = fileURLToPath(new URL(".", import.meta.url));
/** The test file importing this one (each file runs in a module graph of its own). */
const FILE = relative(HERE, expect.getState().testPath ?? "");
/** Fork and snapshots need sandboxes with files of their own: a docker-backed serve, where there is Docker. */
const onDocker = DOCKER_BOUND.includes(FILE) && process.env.SHELLWRIGHT_TEST_DOCKER === "1";
const hasE2bHome = onDocker || existsSync(E2B_HOME);
const gateway = await startTestGateway(
  onDocker
    ? { apis: ["e2b"], backend: { backend: "docker", image: E2B_DOCKER_IMAGE }, cwd: E2B_HOME }
    : { apis: ["e2b"], cwd: hasE2bHome ? E2B_HOME : "/tmp" },
);

const SETTINGS = { E2B_API_URL: gateway.url, E2B_SANDBOX_URL: gateway.url, E2B_API_KEY: TOKEN };
const saved = Object.fromEntries(Object.keys(SETTINGS).map((name) => [name, process.env[name]]));
Object.assign(process.env, SETTINGS);
afterAll(async () => {
  for (const [name, value] of Object.entries(saved))
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  await gateway.close();
});

/** Why this test does not run here, if it does not. */
function notHere(name: string): string | undefined {
  if (!hasE2bHome && HOME_BOUND.includes(FILE))
    return `assumes the sandbox's home is ${E2B_HOME}, E2B's, and that directory does not exist here`;
  if (DOCKER_BOUND.includes(FILE) && !onDocker) return NO_DOCKER;
  return SKIPPED[FILE]?.[name];
}

// Tests written with vitest's own `test` (no sandbox fixture) are skipped by name here.
beforeEach(({ task, skip }) => {
  const reason = notHere(task.name);
  if (reason !== undefined) skip(reason);
});

interface SandboxFixture {
  sandbox: Sandbox;
  template: string;
  sandboxTestId: string;
  sandboxOpts: Partial<SandboxOpts>;
}

export const template = "base";
/** E2B's tests skip what a locally run envd cannot do when this is set; it is not. */
export const isDebug = false;
/** A key of E2B's format, for tests that never reach an API. */
export const TEST_API_KEY = `e2b_${"0".repeat(40)}`;

export const sandboxTest = base.extend<SandboxFixture>({
  template,
  sandboxTestId: [
    // Every sandboxTest runs this one (auto), so the skip is decided here.
    async ({ task, skip }, use) => {
      const reason = notHere(task.name);
      if (reason !== undefined) skip(reason);
      await use(`test-${Math.random().toString(36).slice(2, 10)}`);
    },
    { auto: true },
  ],
  sandboxOpts: {},
  sandbox: [
    async ({ sandboxTestId, sandboxOpts }, use) => {
      const run = async (): Promise<void> => {
        const sandbox = await Sandbox.create(template, { metadata: { sandboxTestId }, ...sandboxOpts });
        try {
          await use(sandbox);
        } finally {
          await sandbox.kill().catch(() => undefined);
        }
      };
      // E2B's home is shared by every sandbox of a local serve (home-lock.ts); /tmp is not ours to clean.
      await (hasE2bHome && !onDocker ? withHome(E2B_HOME, run) : run());
    },
    { auto: false },
  ],
});

export async function wait(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}
