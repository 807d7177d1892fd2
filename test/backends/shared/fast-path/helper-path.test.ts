/**
 * SHELLWRIGHT_HELPER_DIR (src/backends/shared/fast-path/helper-path.ts): where
 * the fast-path helper is looked for. Pointed at an empty directory it stands
 * for a machine without a C compiler, and the suite must still pass there
 * (issue 24.8): the fast-path cases skip with the reason, the others run on
 * the plain path. That part runs the suites concerned in a child vitest.
 */

import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { localHelperPath, staticHelper } from "../../../../src/backends/shared/fast-path/helper-path.js";

const ROOT = resolve(import.meta.dirname, "../../../..");
let empty: string;
let built: string;
beforeAll(() => {
  empty = mkdtempSync(join(tmpdir(), "sw-no-helper-"));
  built = mkdtempSync(join(tmpdir(), "sw-helper-dir-"));
  for (const name of [`swmux-${process.arch}`, `swmux-${process.arch}-static`]) {
    writeFileSync(join(built, name), "#!/bin/sh\n");
    chmodSync(join(built, name), 0o755);
  }
});
afterAll(() => {
  rmSync(empty, { recursive: true, force: true });
  rmSync(built, { recursive: true, force: true });
});
afterEach(() => void vi.unstubAllEnvs());

describe("SHELLWRIGHT_HELPER_DIR", () => {
  it("is where both helpers are looked for: an empty directory has neither", () => {
    vi.stubEnv("SHELLWRIGHT_HELPER_DIR", empty);
    expect(localHelperPath()).toBeUndefined();
    expect(staticHelper()).toBeUndefined();
    vi.stubEnv("SHELLWRIGHT_HELPER_DIR", built);
    expect(localHelperPath()).toBe(join(built, `swmux-${process.arch}`));
    expect(staticHelper()?.path).toBe(join(built, `swmux-${process.arch}-static`));
  });

  it("takes the static helper for this machine when the dynamic one is missing (a package packed on another architecture)", () => {
    const onlyStatic = mkdtempSync(join(tmpdir(), "sw-static-only-"));
    try {
      writeFileSync(join(onlyStatic, `swmux-${process.arch}-static`), "#!/bin/sh\n");
      chmodSync(join(onlyStatic, `swmux-${process.arch}-static`), 0o755);
      vi.stubEnv("SHELLWRIGHT_HELPER_DIR", onlyStatic);
      expect(localHelperPath()).toBe(join(onlyStatic, `swmux-${process.arch}-static`));
    } finally {
      rmSync(onlyStatic, { recursive: true, force: true });
    }
  });

  it("pointed at an empty directory: the fast-path cases skip with the reason, the rest pass", () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST")));
    const child = spawnSync(
      process.execPath,
      [
        join(ROOT, "node_modules/vitest/vitest.mjs"),
        "run",
        "test/backends/shared/owner-watchdog.test.ts",
        "test/backends/local/fast-path.test.ts",
        // Each of these once failed, or skipped without a reason, with no helper built.
        "test/core/session-save-failed.test.ts",
        "test/native/swmux.test.ts",
        "test/native/swmux-protocol.test.ts",
        "test/backends/shared/fast-path/hostile.test.ts",
        "test/backends/shared/fast-path/debug-log.test.ts",
        "test/backends/shared/fast-path/box-fast-path.test.ts",
        "--reporter=verbose",
      ],
      { cwd: ROOT, env: { ...env, SHELLWRIGHT_HELPER_DIR: empty, NO_COLOR: "1", FORCE_COLOR: "0" }, encoding: "utf8" },
    );
    const output = `${child.stdout}${child.stderr}`;
    expect(child.status, output).toBe(0);
    const reason = `[no fast-path helper native/build/swmux-${process.arch} (npm run build makes it where a C compiler is`;
    const line = (name: string): string => output.split("\n").find((l) => l.includes(name)) ?? `no line for ${name}`;
    expect(line("a fast-path call still running")).toMatch(/^\s*↓/);
    expect(line("a fast-path call still running")).toContain(reason);
    expect(line("runs calls in one launcher and keeps the state")).toContain(reason);
    for (const name of ["prints its protocol version", "stops its launcher", "reaches the file from the local helper"])
      expect(line(name)).toContain(reason);
    const staticReason = `[no static fast-path helper native/build/swmux-${process.arch}-static (npm run build makes it`;
    expect(line("runs calls in one launcher in the box and keeps their state")).toContain(staticReason);
    expect(line("reaches the file from the apptainer (stand-in) helper")).toContain(staticReason);
    // The plain path's cases still ran.
    expect(line("local: the background job, the state dir and the watchdog go")).toMatch(/^\s*✓/);
    expect(line("false runs every call as a fresh bash")).toMatch(/^\s*✓/);
  });
});
