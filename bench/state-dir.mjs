#!/usr/bin/env node
// What choosing the local state dir by trying to execute there costs (src/backends/local/state-dir.ts):
// one spawn of an empty file in the candidate directory, once per process per directory, against the
// floor of a spawn of /bin/true, interleaved. Run after `npm run build`:   node bench/state-dir.mjs
// Not a test: nothing here fails.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { canExecuteIn } from "../dist/backends/local/state-dir.js";
import { stateRoots } from "../dist/backends/local/paths.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const root = stateRoots()[0];
const probe = [];
const floor = [];
const spawnTrue = () => new Promise((resolve) => spawn("/bin/true").once("exit", resolve));
for (let i = 0; i < RUNS; i++) {
  const dir = mkdtempSync(join(root, "sw-bench-probe-"));
  try {
    let started = performance.now();
    await canExecuteIn(dir);
    probe.push(performance.now() - started);
    started = performance.now();
    await spawnTrue();
    floor.push(performance.now() - started);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const pct = (times, p) => [...times].sort((a, b) => a - b)[Math.min(times.length - 1, Math.floor(times.length * p))];
console.log(
  `State-dir exec probe in ${root}, ${RUNS} runs each, interleaved (load average ${os.loadavg()[0].toFixed(2)})\n`,
);
console.log("| what | p50 | p95 | p50 vs floor |");
console.log("|---|---|---|---|");
for (const [name, times] of [
  ["floor: spawn('/bin/true')", floor],
  ["the probe (an empty file, spawned)", probe],
])
  console.log(
    `| ${name} | ${pct(times, 0.5).toFixed(2)} ms | ${pct(times, 0.95).toFixed(2)} ms | ${(pct(times, 0.5) / pct(floor, 0.5)).toFixed(2)}x |`,
  );
