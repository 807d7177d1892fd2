#!/usr/bin/env node
// What opening a session costs with this machine's own login profile (on the
// project machine root's runs `pyenv init`), with the login snapshot reused
// (the default: one capture per origin, docs/persistence.md) and without
// (`reuseLoginSnapshot: false`: every open runs `bash -l`), beside the floor
// `bash -l -c true` with the same HOME. Opens without a pool, one at a time
// and four at once; interleaved round by round, so the machine's drift hits
// every side alike. Run after `npm run build`:
//   node bench/login-snapshot.mjs        (BENCH_RUNS=10; SHELLWRIGHT_TEST_SSH* for the ssh part)
// Not a test: nothing here fails.

import { spawnSync } from "node:child_process";
import os from "node:os";
import { createEnvironment } from "../dist/index.js";
import { sshBenchConfig } from "./test-env.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const AT_ONCE = 4;
const env = process.env;

const backends = [{ name: "local", config: { backend: "local", cwd: "/tmp" } }];
const ssh = sshBenchConfig(env);
if (env.SHELLWRIGHT_TEST_SSH === "1" && ssh !== undefined)
  backends.push({ name: "ssh", config: { ...ssh, cwd: "/tmp" } });

function loginFloor() {
  const started = performance.now();
  const result = spawnSync("bash", ["-l", "-c", "true"], { stdio: "ignore" });
  if (result.status !== 0) throw new Error(`bash -l -c true exited ${result.status}`);
  return performance.now() - started;
}

/** Opens `count` sessions at once; the time until the last one is open. */
async function open(config, count) {
  const started = performance.now();
  const sessions = await Promise.all(Array.from({ length: count }, () => createEnvironment(config)));
  const elapsed = performance.now() - started;
  await Promise.all(sessions.map((session) => session.close()));
  return elapsed;
}

const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
};

console.log(`Session open with HOME=${os.homedir()}'s login profile, ${RUNS} rounds, interleaved`);
console.log(`(load average at the start ${os.loadavg()[0].toFixed(2)})\n`);
for (const { name, config } of backends) {
  const sides = {
    "floor: bash -l -c true (here)": () => loginFloor(),
    "open, reuseLoginSnapshot: false": () => open({ ...config, reuseLoginSnapshot: false }, 1),
    "open, reused (default)": () => open(config, 1),
    [`${AT_ONCE} opens at once, reuseLoginSnapshot: false`]: () =>
      open({ ...config, reuseLoginSnapshot: false }, AT_ONCE),
    [`${AT_ONCE} opens at once, reused (default)`]: () => open(config, AT_ONCE),
  };
  await open(config, 1); // the one capture of this origin, and a warm file cache
  const times = Object.fromEntries(Object.keys(sides).map((side) => [side, []]));
  for (let i = 0; i < RUNS; i++) for (const [side, run] of Object.entries(sides)) times[side].push(await run());
  const floor = pct(times["floor: bash -l -c true (here)"], 0.5);
  console.log(`### ${name}\n`);
  console.log("| what | p50 | p95 | p50 vs floor |");
  console.log("|---|---|---|---|");
  for (const [side, values] of Object.entries(times))
    console.log(
      `| ${side} | ${pct(values, 0.5).toFixed(1)} ms | ${pct(values, 0.95).toFixed(1)} ms | ${(pct(values, 0.5) / floor).toFixed(2)}x |`,
    );
  console.log("");
}
console.log(`load average at the end ${os.loadavg()[0].toFixed(2)}`);
