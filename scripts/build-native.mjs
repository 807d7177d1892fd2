#!/usr/bin/env node
// Builds the fast-path helper (native/swmux.c) with the C compiler when there
// is one: native/build/swmux-<arch> for this machine, and static copies for
// the systems whose libc is unknown (docker, ssh, the box backends copy it in):
// swmux-x64-static and swmux-arm64-static (the other architecture with
// Debian's cross compiler, aarch64-linux-gnu-gcc or x86_64-linux-gnu-gcc, when
// it is installed). The protocol header comes first, from the compiled
// protocol.ts (dist/), so the C side cannot drift from the TypeScript one.
// Without a compiler it says so on stderr and succeeds: the fast path is then
// unavailable there and every call takes the plain path (docs/fast-path.md).
import { spawnSync } from "node:child_process";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const sources = [`${root}native/swmux.c`, `${root}native/procs.c`, `${root}native/sha256.c`, `${root}native/pty.c`];
const outDir = `${root}native/build`;
const say = (line) => process.stderr.write(`build-native: ${line}\n`);

if (process.platform !== "linux") {
  say(`skipped on ${process.platform} (the fast path needs Linux pidfds); the plain path runs`);
  process.exit(0);
}
mkdirSync(outDir, { recursive: true });
const { protocolHeader } = await import(pathToFileURL(`${root}dist/backends/shared/fast-path/protocol.js`).href);
writeFileSync(`${outDir}/protocol.h`, protocolHeader());

// The stack protector and fortified libc calls: the helper reads frames from a channel a command may reach.
const FLAGS = [
  "-O2",
  "-std=gnu11",
  "-Wall",
  "-Wextra",
  "-Werror",
  "-Wshadow",
  "-Wformat=2",
  "-fstack-protector-strong",
  "-D_FORTIFY_SOURCE=2",
  `-I${outDir}`,
];

/** Builds one variant; false (after one line saying why) when the compiler could not. */
function build(cc, target, extraFlags, what) {
  const tmp = `${target}.${process.pid}.tmp`;
  const result = spawnSync(cc, [...FLAGS, ...extraFlags, "-o", tmp, ...sources], {
    stdio: ["ignore", process.stderr, process.stderr],
  });
  if (result.error !== undefined || result.status !== 0) {
    rmSync(tmp, { force: true });
    say(`${cc} ${result.error !== undefined ? "not found" : "failed"}; ${what}`);
    return false;
  }
  renameSync(tmp, target);
  say(`built ${target.slice(root.length)}`);
  return true;
}

const cc = process.env.CC || "cc";
const arch = process.arch;
const out = `${outDir}/swmux-${arch}`;
if (build(cc, out, [], "the fast-path helper was not built, every call takes the plain path")) {
  build(
    cc,
    `${out}-static`,
    ["-static", "-s"],
    "no static helper (needs a static libc): remote calls take the plain path",
  );
  // The other architecture, for hosts and images that are not this machine's.
  const other =
    arch === "x64" ? { arch: "arm64", cc: "aarch64-linux-gnu-gcc" } : { arch: "x64", cc: "x86_64-linux-gnu-gcc" };
  if (spawnSync(other.cc, ["--version"], { stdio: "ignore" }).status === 0)
    build(other.cc, `${outDir}/swmux-${other.arch}-static`, ["-static", "-s"], `no ${other.arch} helper`);
  else say(`${other.cc} not found: no ${other.arch} helper (${other.arch} hosts and images take the plain path)`);
}
