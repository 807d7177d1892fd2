#!/usr/bin/env node
// Session-core benchmark: prints ratios against floors measured in the same
// run, interleaved call by call so the machine's drift hits both sides alike.
// Run with `npm run bench` (builds first). Not a test: nothing here fails.

import { spawn } from "node:child_process";
import os from "node:os";
import { createEnvironment } from "../dist/index.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 400);
const BIG_BYTES = 135_000_000;

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const summary = (times) => {
  const s = [...times].sort((a, b) => a - b);
  return { p50: pct(s, 0.5), p95: pct(s, 0.95) };
};
const ms = (x) => `${x.toFixed(2)} ms`;
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;

/** The floor: a bare `bash -c`, read to its exit. */
function bareSpawn(script) {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", script], { stdio: ["ignore", "pipe", "ignore"] });
    let bytes = 0;
    child.stdout.on("data", (d) => (bytes += d.length));
    child.on("close", () => resolve(bytes));
  });
}

/** The old design: one long-lived bash fed commands over stdin, a sentinel per command. */
function persistentShell() {
  const child = spawn("bash", [], { stdio: ["pipe", "pipe", "ignore"] });
  let buffer = "";
  let waiting;
  child.stdout.on("data", (d) => {
    buffer += d.toString();
    if (waiting && buffer.includes(waiting.sentinel)) {
      const done = waiting;
      waiting = undefined;
      buffer = "";
      done.resolve();
    }
  });
  let n = 0;
  return {
    run(command) {
      const sentinel = `__DONE_${++n}__`;
      return new Promise((resolve) => {
        waiting = { sentinel, resolve };
        child.stdin.write(`${command}\necho ${sentinel}\n`);
      });
    },
    close: () => child.kill(),
  };
}

async function time(fn) {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function latency(env) {
  const shell = persistentShell();
  const rows = { floor: [], persistent: [], true: [], cdExport: [] };
  for (let i = 0; i < 20; i++) {
    await bareSpawn("true");
    await env.execute("true");
  }
  for (let i = 0; i < CALLS; i++) {
    rows.floor.push(await time(() => bareSpawn("true")));
    rows.true.push(await time(() => env.execute("true")));
    rows.persistent.push(await time(() => shell.run("true")));
    rows.cdExport.push(await time(() => env.execute("cd /tmp && export A=1")));
  }
  shell.close();
  const floor = summary(rows.floor);
  console.log(`\n## Per-call latency (${CALLS} calls each, interleaved)\n`);
  console.log("| what | p50 | p95 | p50 vs floor |");
  console.log("|---|---|---|---|");
  for (const [name, label] of [
    ["floor", "floor: bare spawn('bash', ['-c', 'true'])"],
    ["true", "execute('true')"],
    ["cdExport", "execute('cd /tmp && export A=1')"],
    ["persistent", "old design: long-lived bash over stdin"],
  ]) {
    const s = summary(rows[name]);
    console.log(`| ${label} | ${ms(s.p50)} | ${ms(s.p95)} | ${ratio(s.p50, floor.p50)} |`);
  }
}

async function throughput(env) {
  console.log("\n## Throughput (calls/s)\n");
  console.log("| concurrency | execute('true') | bare spawn floor | ratio |");
  console.log("|---|---|---|---|");
  for (const concurrency of [1, 8, 32]) {
    const total = Math.max(concurrency * 10, 200);
    const measure = async (call) => {
      let next = 0;
      const start = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next++ < total) await call();
        }),
      );
      return total / ((performance.now() - start) / 1000);
    };
    const floor = await measure(() => bareSpawn("true"));
    const ours = await measure(() => env.execute("true"));
    console.log(`| ${concurrency} | ${ours.toFixed(0)} | ${floor.toFixed(0)} | ${ratio(ours, floor)} |`);
  }
}

async function bigOutput(env) {
  const command = `head -c ${BIG_BYTES} /dev/zero | tr '\\0' a`;
  const rows = { count: [], ours: [] };
  let peak = 0;
  for (let i = 0; i < 3; i++) {
    rows.count.push(await time(() => bareSpawn(command)));
    const before = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss - before)), 10);
    rows.ours.push(await time(() => env.execute(command)));
    clearInterval(sampler);
  }
  const count = summary(rows.count).p50;
  const ours = summary(rows.ours).p50;
  console.log(`\n## ${BIG_BYTES / 1e6} MB of output (median of 3)\n`);
  console.log("| what | time | vs count-only | RSS growth |");
  console.log("|---|---|---|---|");
  console.log(`| floor: spawn and count the bytes | ${ms(count)} | 1.00x | |`);
  console.log(
    `| execute() keeping head + tail | ${ms(ours)} | ${ratio(ours, count)} | ${(peak / 1e6).toFixed(1)} MB |`,
  );
}

const env = await createEnvironment({ backend: "local" });
console.log(`# Shellwright bench, ${new Date().toISOString().slice(0, 10)}`);
console.log(
  `\nMachine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average ${os.loadavg()[0].toFixed(2)}`,
);
try {
  await latency(env);
  await throughput(env);
  await bigOutput(env);
} finally {
  await env.close();
}
