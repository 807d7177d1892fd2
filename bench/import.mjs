#!/usr/bin/env node
// What `import "shellwright"` costs beside a bare `node -e 0`, and what the
// terminal emulator (@xterm/headless, loaded with the first PTY since issue
// 34) would add if the import still loaded it: the third side imports the
// package and then the emulator, which is what the import did before.
// Runs are interleaved so the machine's drift hits every side alike. Run
// after `npm run build`:   node bench/import.mjs   (BENCH_RUNS=30)
// Not a test: nothing here fails.

import { spawnSync } from "node:child_process";
import os from "node:os";

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const index = JSON.stringify(new URL("../dist/index.js", import.meta.url).href);
const emulator = JSON.stringify(new URL("../node_modules/@xterm/headless/", import.meta.url).href);

const sides = {
  "floor: node -e 0": ["-e", "0"],
  'import("shellwright")': ["--input-type=module", "-e", `await import(${index});`],
  'import("shellwright") + the emulator (as before)': [
    "--input-type=module",
    "-e",
    `await import(${index}); (await import("node:module")).createRequire(${emulator})("@xterm/headless");`,
  ],
};

function time(args) {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return elapsed;
}

const times = Object.fromEntries(Object.keys(sides).map((name) => [name, []]));
for (const args of Object.values(sides)) time(args); // warm the file cache
for (let i = 0; i < RUNS; i++) for (const [name, args] of Object.entries(sides)) times[name].push(time(args));

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const stats = Object.entries(times).map(([name, t]) => {
  const s = [...t].sort((a, b) => a - b);
  return { name, p50: pct(s, 0.5), p95: pct(s, 0.95) };
});
const floor = stats[0].p50;
console.log(`Import cost, ${RUNS} runs each, interleaved (load average ${os.loadavg()[0].toFixed(2)})\n`);
console.log("| what | p50 | p95 | p50 vs floor | p50 over floor |");
console.log("|---|---|---|---|---|");
for (const { name, p50, p95 } of stats)
  console.log(
    `| ${name} | ${p50.toFixed(1)} ms | ${p95.toFixed(1)} ms | ${(p50 / floor).toFixed(2)}x | +${(p50 - floor).toFixed(1)} ms |`,
  );
