#!/usr/bin/env node
// Builds the fast-path helper (native/swmux.c) into native/build/swmux-<arch>
// with the C compiler when there is one. Without one it says so in one line
// and succeeds: the fast path is then unavailable and every call takes the
// plain path (docs/fast-path.md).
import { spawnSync } from "node:child_process";
import { mkdirSync, renameSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const source = `${root}native/swmux.c`;
const outDir = `${root}native/build`;
const out = `${outDir}/swmux-${process.arch}`;

if (process.platform !== "linux") {
  console.log(`build-native: skipped on ${process.platform} (the fast path needs Linux pidfds); the plain path runs`);
  process.exit(0);
}
const cc = process.env.CC || "cc";
mkdirSync(outDir, { recursive: true });
const tmp = `${out}.${process.pid}.tmp`;
const result = spawnSync(cc, ["-O2", "-Wall", "-Wextra", "-o", tmp, source], {
  stdio: ["ignore", "inherit", "inherit"],
});
if (result.error !== undefined || result.status !== 0) {
  rmSync(tmp, { force: true });
  const why = result.error !== undefined ? `${cc} not found` : `${cc} failed`;
  console.log(`build-native: ${why}; the fast-path helper was not built, every call takes the plain path`);
  process.exit(0);
}
renameSync(tmp, out);
console.log(`build-native: built ${out.slice(root.length)}`);
