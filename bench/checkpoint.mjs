#!/usr/bin/env node
// Checkpoint and rollback of a local session's declared workspace (docs/branching.md): 200 MB in 200 files,
// 1 MB of it changed before each rollback, against the floor of the copy they are built on
// (`cp --reflink=auto -a` of the same tree into the same places), interleaved round by round.
// Run after `npm run build`:   node bench/checkpoint.mjs   (BENCH_RUNS, BENCH_WORKSPACE_MB)
// Not a test: nothing here fails.

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { dirname, join } from "node:path";
import { createEnvironment } from "../dist/index.js";
import { printFloorTable, timedRound } from "./floor-table.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const MB = Number(process.env.BENCH_WORKSPACE_MB ?? 200);
const base = mkdtempSync(join(os.tmpdir(), "sw-bench-cp-"));
const ws = join(base, "ws");
mkdirSync(ws);
for (let i = 0; i < MB; i++) writeFileSync(join(ws, `f${i}`), randomBytes(1024 * 1024));

const env = await createEnvironment({ workspace: ws, cwd: ws, workspaceMaxBytes: 2 * MB * 1024 * 1024 });
const stateDir = dirname(env.paths.snapshot);
const times = { floorSave: [], save: [], floorRestore: [], restore: [] };
const cp = (from, to) => spawnSync("cp", ["--reflink=auto", "-a", "--", from, to]);
try {
  for (let i = 0; i < RUNS; i++) {
    // Floor: the copy a checkpoint makes (into the state dir) and the one a rollback makes (beside the root).
    let started = performance.now();
    cp(ws, join(stateDir, "floor"));
    times.floorSave.push(performance.now() - started);
    started = performance.now();
    cp(join(stateDir, "floor"), join(base, "floor"));
    times.floorRestore.push(performance.now() - started);
    rmSync(join(stateDir, "floor"), { recursive: true, force: true });
    rmSync(join(base, "floor"), { recursive: true, force: true });

    await timedRound(env, () => writeFileSync(join(ws, `f${i % MB}`), randomBytes(1024 * 1024)), times);
  }
} finally {
  await env.close();
  rmSync(base, { recursive: true, force: true });
}

const fs = (dir) => spawnSync("stat", ["-f", "-c", "%T", dir], { encoding: "utf8" }).stdout.trim();
console.log(
  `Local checkpoint of a ${MB} MB workspace (${MB} files of 1 MB) on ${fs(os.tmpdir())}, state dir on ` +
    `${fs(dirname(stateDir))}, 1 MB changed before each rollback, ${RUNS} rounds interleaved (load average ${os.loadavg()[0].toFixed(2)})\n`,
);
printFloorTable([
  ["floor: cp --reflink=auto -a of the workspace into the state dir", times.floorSave, times.floorSave],
  ["checkpoint()", times.save, times.floorSave],
  ["floor: cp --reflink=auto -a of that copy beside the root", times.floorRestore, times.floorRestore],
  ["rollback() (1 MB changed)", times.restore, times.floorRestore],
]);
