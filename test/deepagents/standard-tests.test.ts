/**
 * LangChain's Sandbox Standard Tests for deepagents (vendored unmodified in
 * test/vendor/sandbox-standard-tests, see its PROVENANCE.md) run against
 * ShellwrightSandbox on local, docker and ssh, each on the real backend.
 */

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { ShellwrightSandbox } from "../../src/deepagents/index.js";
import { compatBackends } from "../compat/backends.js";

const VENDOR = new URL("../vendor/sandbox-standard-tests/", import.meta.url);

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

describe("the vendored Sandbox Standard Tests", () => {
  it("are unmodified: every file has the SHA-256 its PROVENANCE.md lists", () => {
    const listed = readFileSync(new URL("PROVENANCE.md", VENDOR), "utf8").matchAll(/^([0-9a-f]{64}) {2}(\S+)$/gm);
    const files = [...listed].map(([, hash, file]) => ({ file, hash }));
    expect(files.map((f) => f.file)).toEqual(
      expect.arrayContaining(["LICENSE", "src/sandbox.ts", "src/tests/edit.ts"]),
    );
    for (const { file, hash } of files) {
      expect(
        createHash("sha256")
          .update(readFileSync(new URL(file!, VENDOR)))
          .digest("hex"),
        file,
      ).toBe(hash);
    }
  });
});

for (const backend of compatBackends.filter((b) => ["local", "docker", "ssh"].includes(b.name))) {
  // Every run its own directory: the suite's file names are fixed.
  const root = `/tmp/shellwright-deepagents-${backend.name}-${process.pid}-${Date.now().toString(36)}`;

  sandboxStandardTests({
    name: `ShellwrightSandbox on ${backend.name}`,
    skip: !backend.enabled,
    timeout: 120_000,
    createSandbox: (options) =>
      ShellwrightSandbox.create(
        () => backend.create(),
        options?.initialFiles === undefined ? {} : { initialFiles: options.initialFiles },
      ),
    createUninitializedSandbox: () => new ShellwrightSandbox(() => backend.create()),
    closeSandbox: (sandbox) => sandbox.close(),
    resolvePath: (name) => `${root}/${name}`,
  });

  describe.skipIf(!backend.enabled)(`ShellwrightSandbox on ${backend.name}: cleanup`, () => {
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
