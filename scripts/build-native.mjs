#!/usr/bin/env node
// Builds the fast-path helper (native/swmux.c) into native/build/swmux-<arch>
// with the C compiler when there is one, and a static copy,
// native/build/swmux-<arch>-static, for backends that run it in a system whose
// libc is unknown (docker and ssh: it is copied into the container or onto the host). Without a
// compiler (or a static libc) it says so in one line and succeeds: the fast
// path is then unavailable there and every call takes the plain path
// (docs/fast-path.md). Every line goes to stderr: npm runs this in `prepare`
// (npm 10 even under --ignore-scripts), and `npm pack --json` must stay JSON.
import { spawnSync } from "node:child_process";
import { mkdirSync, renameSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const source = `${root}native/swmux.c`;
const outDir = `${root}native/build`;
const out = `${outDir}/swmux-${process.arch}`;

if (process.platform !== "linux") {
  console.error(`build-native: skipped on ${process.platform} (the fast path needs Linux pidfds); the plain path runs`);
  process.exit(0);
}
const cc = process.env.CC || "cc";
mkdirSync(outDir, { recursive: true });

/** Builds one variant; false (after one line saying why) when the compiler could not. */
function build(target, extraFlags, what) {
  const tmp = `${target}.${process.pid}.tmp`;
  const result = spawnSync(cc, ["-O2", "-Wall", "-Wextra", ...extraFlags, "-o", tmp, source], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (result.error !== undefined || result.status !== 0) {
    rmSync(tmp, { force: true });
    const why = result.error !== undefined ? `${cc} not found` : `${cc} failed`;
    console.error(`build-native: ${why}; ${what}`);
    return false;
  }
  renameSync(tmp, target);
  console.error(`build-native: built ${target.slice(root.length)}`);
  return true;
}

if (build(out, [], "the fast-path helper was not built, every call takes the plain path"))
  build(
    `${out}-static`,
    ["-static", "-s"],
    "no static helper (needs a static libc): docker and ssh calls take the plain path",
  );
