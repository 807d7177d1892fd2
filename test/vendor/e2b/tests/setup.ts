/**
 * Shellwright's stand-in for E2B's `tests/setup.ts` (not E2B's file): the
 * `sandboxTest` fixture the vendored tests import, giving each test a sandbox
 * of a `shellwright serve --api e2b` started for the test file, reached
 * through the SDK's own settings (apiUrl, sandboxUrl) with the gateway token
 * as its API key.
 */

import { afterAll, test as base } from "vitest";
import { Sandbox, type SandboxOpts } from "e2b";
import type { Gateway } from "../../../../src/index.js";
import { startTestGateway, TOKEN } from "../../../gateway/helpers.js";

let started: Promise<Gateway> | undefined;
const gateway = (): Promise<Gateway> => (started ??= startTestGateway({ apis: ["e2b"], cwd: "/tmp" }));
afterAll(async () => {
  if (started !== undefined) await (await started).close();
});

interface SandboxFixture {
  sandbox: Sandbox;
  template: string;
  sandboxTestId: string;
  sandboxOpts: Partial<SandboxOpts>;
}

export const template = "base";
export const isDebug = false;

export const sandboxTest = base.extend<SandboxFixture>({
  template,
  sandboxTestId: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => use(`test-${Math.random().toString(36).slice(2, 10)}`),
    { auto: true },
  ],
  sandboxOpts: {},
  sandbox: [
    async ({ sandboxTestId, sandboxOpts }, use) => {
      const { url } = await gateway();
      const sandbox = await Sandbox.create(template, {
        metadata: { sandboxTestId },
        ...sandboxOpts,
        apiKey: TOKEN,
        apiUrl: url,
        sandboxUrl: url,
      });
      try {
        await use(sandbox);
      } finally {
        await sandbox.kill().catch(() => undefined);
      }
    },
    { auto: false },
  ],
});

export async function wait(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}
