#!/usr/bin/env node
// File-tools benchmark: read_file, a one-line patch of a 10 000-line file, and
// execute_code tool calls per second, each as a ratio against the floor: a bare
// `session.execute("true")` measured in the same run, interleaved call by call.
// Run after `npm run build`: node bench/file-tools.mjs [backend | '{"backend":"docker",…}']. Not a test.

import os from "node:os";
import { createEnvironment } from "../dist/index.js";
import { readFileTool } from "../dist/tools/files/read-file.js";
import { writeFileTool } from "../dist/tools/files/write-file.js";
import { patchTool } from "../dist/tools/patch/patch-tool.js";
import { executeCodeTool } from "../dist/tools/registry.js";
import { runTool } from "../dist/tools/shared/tool-definition.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 60);
const CODE_CALLS = Number(process.env.BENCH_CODE_CALLS ?? 50);
const arg = process.argv[2] ?? "local";
const config = arg.startsWith("{") ? JSON.parse(arg) : { backend: arg };
const backend = config.backend ?? "local";

const p50 = (times) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)];
const ms = (x) => `${x.toFixed(2)} ms`;
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
async function time(fn) {
  const start = performance.now();
  const result = await fn();
  if (result && result.error) throw new Error(result.error);
  return performance.now() - start;
}

const session = await createEnvironment(config);
const ctx = { session };
const dir = (await session.execute("mktemp -d")).output.trim();
const small = `${dir}/small.txt`;
const big = `${dir}/big.txt`;
await runTool(
  writeFileTool,
  { path: small, content: Array.from({ length: 200 }, (_, i) => `line ${i} of a small file`).join("\n") + "\n" },
  ctx,
);
await runTool(
  writeFileTool,
  { path: big, content: Array.from({ length: 10_000 }, (_, i) => `line ${i} ${"x".repeat(40)}`).join("\n") + "\n" },
  ctx,
);
await runTool(readFileTool, { path: small }, ctx); // warm-up (and the one-time output-limit calibration)

const floor = [];
const read = [];
const patch = [];
for (let i = 0; i < CALLS; i++) {
  floor.push(await time(() => session.execute("true")));
  read.push(await time(() => runTool(readFileTool, { path: small }, ctx)));
  const [from, to] = i % 2 === 0 ? ["line 5000 ", "line FIVE "] : ["line FIVE ", "line 5000 "];
  patch.push(await time(() => runTool(patchTool, { path: big, old_string: from, new_string: to }, ctx)));
}

// execute_code: a script that makes CODE_CALLS read_file calls, timed from inside the script.
const code = `import time\nt = time.perf_counter()\nfor i in range(${CODE_CALLS}):\n    read_file(${JSON.stringify(small)}, limit=5)\nprint(time.perf_counter() - t)`;
const run = await runTool(executeCodeTool, { code }, ctx);
if (run.status !== "success") throw new Error(JSON.stringify(run));
const perCallMs = (Number(run.output.trim()) * 1000) / CODE_CALLS;
const readP50 = p50(read);

console.log(
  `file tools on ${backend}: ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? "?"}, Node ${process.version}, ${new Date().toISOString()}`,
);
console.log(`floor: bare execute("true")           p50 ${ms(p50(floor))}`);
console.log(`read_file (200-line file)             p50 ${ms(readP50)}  = ${ratio(readP50, p50(floor))} the floor`);
console.log(
  `patch, one line of a 10 000-line file p50 ${ms(p50(patch))}  = ${ratio(p50(patch), p50(floor))} the floor`,
);
console.log(
  `execute_code read_file calls          ${(1000 / perCallMs).toFixed(1)} calls/s, ${ms(perCallMs)} per call = ${ratio(perCallMs, readP50)} a direct read_file`,
);

await session.execute(`rm -rf ${dir}`);
await session.close();
