/**
 * LangChain's Sandbox Standard Tests for deepagents (vendored unmodified in
 * test/vendor/sandbox-standard-tests, see its PROVENANCE.md) against
 * ShellwrightSandbox on one compat backend. One test file per backend, so
 * the three runs (each a few minutes) go to different workers.
 */

import { afterAll, describe, expect, it } from "vitest";
import { ShellwrightSandbox } from "../../src/deepagents/index.js";
import { compatBackends } from "../compat/backends.js";

export const VENDOR = new URL("../vendor/sandbox-standard-tests/", import.meta.url);

// Imported by a computed name: the suite is type-checked by its authors' settings, not by this project's tsc.
const suite = new URL("src/vitest.ts", VENDOR).href;
const { sandboxStandardTests } = (await import(/* @vite-ignore */ suite)) as {
  sandboxStandardTests: (config: {
    name: string;
    skip?: boolean;
    timeout?: number;
    createSandbox: (options?: { initialFiles?: Record<string, string> }) => Promise<ShellwrightSandbox>;
    createUninitializedSandbox?: () => ShellwrightSandbox;
    closeSandbox?: (sandbox: ShellwrightSandbox) => Promise<void>;
    resolvePath: (name: string) => string;
  }) => void;
};

export function standardTestsOn(name: "local" | "docker" | "ssh"): void {
  const backend = compatBackends.find((b) => b.name === name)!;
  // Every run its own directory: the suite's file names are fixed.
  const root = `/tmp/shellwright-deepagents-${name}-${process.pid}-${Date.now().toString(36)}`;

  sandboxStandardTests({
    name: `ShellwrightSandbox on ${name}`,
    skip: !backend.enabled,
    timeout: 120_000,
    createSandbox: (options) =>
      ShellwrightSandbox.create(
        () => backend.create(),
        options?.initialFiles === undefined ? {} : { initialFiles: options.initialFiles },
      ),
    createUninitializedSandbox: () => new ShellwrightSandbox(() => backend.create()),
    closeSandbox: (sandbox) => sandbox.close(),
    resolvePath: (file) => `${root}/${file}`,
  });

  describe.skipIf(!backend.enabled)(`ShellwrightSandbox on ${name}: cleanup`, () => {
    afterAll(async () => {
      const session = await backend.create();
      await session.execute(`rm -rf ${root}`);
      await session.close();
    });
    it("leaves nothing behind but the suite's directory, removed after", () => {
      expect(root).toMatch(/^\/tmp\/shellwright-deepagents-/);
    });
  });
}
