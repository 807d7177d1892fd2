#!/usr/bin/env node
// Checkpoint and rollback of a sandboxed local session's workspace, kept as overlay layers (docs/branching.md):
// 200 MB in 200 files, 1 MB of it rewritten inside the sandbox before each rollback. Floors from the same run,
// interleaved round by round: one `nsenter` into the sandbox's mount namespace running `true` (the least a
// mount step costs), one `execute("true")` of the session, and the `cp --reflink=auto -a` of the workspace
// that a checkpoint without the sandbox makes. Needs root and bwrap.
// Run after `npm run build`:   node bench/checkpoint-sandbox.mjs   (BENCH_RUNS, BENCH_WORKSPACE_MB)
// Not a test: nothing here fails.

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { dirname, join } from "node:path";
import { createEnvironment } from "../dist/index.js";
import { printFloorTable, timedRound } from "./floor-table.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const MB = Number(process.env.BENCH_WORKSPACE_MB ?? 200);
const base = mkdtempSync("/var/tmp/sw-bench-cp-sandbox-");
const ws = join(base, "ws");
mkdirSync(ws);
for (let i = 0; i < MB; i++) writeFileSync(join(ws, `f${i}`), randomBytes(1024 * 1024));

const env = await createEnvironment({ workspace: ws, cwd: ws, sandbox: { writable: [ws] } });
const stateDir = dirname(env.paths.snapshot);
const init = initPid(stateDir);
// The same sandbox without a workspace: its checkpoints hold the shell state only (what the overlay adds to).
const shellOnly = await createEnvironment({ cwd: ws, sandbox: { writable: [ws] } });
const times = { nsenter: [], execute: [], copy: [], save: [], restore: [], shellSave: [], shellRestore: [] };
try {
  await env.execute("true");
  for (let i = 0; i < RUNS; i++) {
    let started = performance.now();
    spawnSync("nsenter", ["--target", String(init), "--mount", "--pid", "--", "true"]);
    times.nsenter.push(performance.now() - started);
    started = performance.now();
    await env.execute("true");
    times.execute.push(performance.now() - started);
    started = performance.now();
    spawnSync("cp", ["--reflink=auto", "-a", "--", ws, join(base, "floor")]);
    times.copy.push(performance.now() - started);
    rmSync(join(base, "floor"), { recursive: true, force: true });

    started = performance.now();
    const shell = await shellOnly.checkpoint();
    times.shellSave.push(performance.now() - started);
    started = performance.now();
    await shellOnly.rollback(shell);
    times.shellRestore.push(performance.now() - started);
    await shellOnly.releaseCheckpoint(shell);

    await timedRound(env, () => env.execute(`head -c 1048576 /dev/urandom > f${i % MB}`), times);
  }
} finally {
  await env.close();
  await shellOnly.close();
  rmSync(base, { recursive: true, force: true });
}

/** The sandbox's init: the child of the bwrap whose command line names the session's state dir. */
function initPid(state) {
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "bwrap") continue;
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(state)) continue;
      return Number(readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ")[0]);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no bwrap runs for ${state}`);
}

console.log(
  `Sandboxed local checkpoint of a ${MB} MB workspace (${MB} files of 1 MB, overlay layers on ` +
    `${spawnSync("stat", ["-f", "-c", "%T", dirname(stateDir)], { encoding: "utf8" }).stdout.trim()}), 1 MB rewritten ` +
    `before each rollback, ${RUNS} rounds interleaved (load average ${os.loadavg()[0].toFixed(2)})\n`,
);
printFloorTable([
  ["floor: nsenter into the sandbox's mount namespace, `true`", times.nsenter, times.nsenter],
  ['floor: execute("true")', times.execute, times.execute],
  ["floor: cp --reflink=auto -a of the workspace (a checkpoint without the sandbox)", times.copy, times.copy],
  ["floor: checkpoint() of the shell state only (same sandbox, no workspace)", times.shellSave, times.shellSave],
  ["floor: rollback() of the shell state only", times.shellRestore, times.shellRestore],
  ["checkpoint()", times.save, times.nsenter],
  ["checkpoint() vs the shell state's", times.save, times.shellSave],
  ["checkpoint() vs the copy", times.save, times.copy],
  ["rollback() (1 MB rewritten)", times.restore, times.nsenter],
  ["rollback() vs the shell state's", times.restore, times.shellRestore],
]);
