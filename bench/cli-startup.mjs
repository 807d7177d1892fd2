#!/usr/bin/env node
// What starting the CLI costs: `node dist/cli/main.js exec true` against a
// process that only imports the library (`import("shellwright")`, i.e.
// dist/index.js). The CLI loads only the subcommand it runs, so exec should
// cost little more than the library plus one command (target: p50 ≤ 1.5×).
// A session reads the login profile, as a terminal does, and that costs what
// the profile costs (1.5 s for one that runs `pyenv init`): both sides run
// with HOME set to an empty directory, and the profile of the real HOME is
// timed on its own line (`bash -l -c true`), to add on top.
// Runs are interleaved so the machine's drift hits both sides alike. Run
// after `npm run build`:   node bench/cli-startup.mjs   (BENCH_RUNS=30)
// Not a test: nothing here fails.

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const main = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
const index = new URL("../dist/index.js", import.meta.url).href;

const sides = {
  "floor: node -e 'import(\"shellwright\")'": ["--input-type=module", "-e", `await import(${JSON.stringify(index)});`],
  "shellwright exec true": [main, "exec", "true"],
};

const neutralHome = mkdtempSync(join(os.tmpdir(), "sw-bench-home-"));
process.on("exit", () => rmSync(neutralHome, { recursive: true, force: true }));

function time(args, { command = process.execPath, home = neutralHome } = {}) {
  const started = performance.now();
  const result = spawnSync(command, args, {
    stdio: ["ignore", "ignore", "pipe"],
    encoding: "utf8",
    env: { ...process.env, HOME: home },
  });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return elapsed;
}

const times = Object.fromEntries(Object.keys(sides).map((name) => [name, []]));
for (const args of Object.values(sides)) time(args); // warm the file cache
for (let i = 0; i < RUNS; i++) for (const [name, args] of Object.entries(sides)) times[name].push(time(args));

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const stats = Object.fromEntries(
  Object.entries(times).map(([name, t]) => {
    const s = [...t].sort((a, b) => a - b);
    return [name, { p50: pct(s, 0.5), p95: pct(s, 0.95) }];
  }),
);
const floor = stats[Object.keys(sides)[0]].p50;
console.log(`CLI start-up, ${RUNS} runs each, interleaved (load average ${os.loadavg()[0].toFixed(2)})\n`);
console.log("| what | p50 | p95 | p50 vs floor |");
console.log("|---|---|---|---|");
for (const [name, { p50, p95 }] of Object.entries(stats))
  console.log(`| ${name} | ${p50.toFixed(1)} ms | ${p95.toFixed(1)} ms | ${(p50 / floor).toFixed(2)}x |`);
const profile = Array.from({ length: Math.min(RUNS, 10) }, () =>
  time(["-l", "-c", "true"], { command: "bash", home: os.homedir() }),
).sort((a, b) => a - b);
console.log(
  `\nOn top, this machine's own login profile (HOME=${os.homedir()}): bash -l -c true p50 ${pct(profile, 0.5).toFixed(1)} ms`,
);
