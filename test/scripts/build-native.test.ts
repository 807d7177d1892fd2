/**
 * scripts/build-native.mjs prints only to stderr: npm runs it in `prepare` (npm 10 even under
 * --ignore-scripts), and anything on stdout breaks `npm pack --json`. Runs a copy of the script in a
 * scratch tree, so the project's native/build is never touched.
 */

import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const script = join(import.meta.dirname, "../../scripts/build-native.mjs");
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A scratch tree with the script and a source file; runs it with `CC` set to `cc`. */
function buildWith(cc: string) {
  const root = mkdtempSync(join(tmpdir(), "sw-build-native-"));
  roots.push(root);
  mkdirSync(join(root, "scripts"));
  mkdirSync(join(root, "native"));
  copyFileSync(script, join(root, "scripts", "build-native.mjs"));
  // The protocol header comes from the compiled protocol.ts (npm test builds dist/ first).
  mkdirSync(join(root, "dist/backends/shared/fast-path"), { recursive: true });
  writeFileSync(join(root, "package.json"), '{ "type": "module" }\n');
  copyFileSync(
    join(import.meta.dirname, "../../dist/backends/shared/fast-path/protocol.js"),
    join(root, "dist/backends/shared/fast-path/protocol.js"),
  );
  writeFileSync(join(root, "native", "swmux.c"), "int main(void) { return 0; }\n");
  const result = spawnSync(process.execPath, [join(root, "scripts", "build-native.mjs")], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, CC: cc },
  });
  return { root, code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe.runIf(process.platform === "linux")("build-native", () => {
  it("without a compiler says so on stderr, nothing on stdout, and succeeds", () => {
    const result = buildWith("/nonexistent/cc");
    expect(result).toMatchObject({ code: 0, stdout: "" });
    expect(result.stderr).toMatch(/build-native: \/nonexistent\/cc not found/);
  });

  it("a build that works reports it on stderr, nothing on stdout", () => {
    // A stand-in compiler that writes its -o target, so the test needs no C compiler.
    const root = mkdtempSync(join(tmpdir(), "sw-fake-cc-"));
    roots.push(root);
    const cc = join(root, "cc");
    writeFileSync(cc, '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = -o ] && : > "$2"; shift; done\n');
    chmodSync(cc, 0o755);
    const result = buildWith(cc);
    expect(result).toMatchObject({ code: 0, stdout: "" });
    expect(result.stderr).toMatch(/build-native: built native\/build\/swmux-/);
    expect(existsSync(join(result.root, "native", "build", `swmux-${process.arch}`))).toBe(true);
  });
});
