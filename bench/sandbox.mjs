// The local sandbox's cost: execute('true') in a sandboxed session against an
// unsandboxed one, in the same run and interleaved (target: p50 at most 2x).
// Also the per-call launch choices it was picked from: a bare bash, a fresh
// bwrap per call (with a new network namespace), and nsenter + setpriv into
// the session's long-lived sandbox (what each call pays now); and the one-time
// cost of opening a sandboxed session. After `npm run build`:
//   node bench/sandbox.mjs [iterations]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createEnvironment } from "../dist/index.js";
import { LocalTransport } from "../dist/backends/local/transport.js";
import { normalizeSandbox } from "../dist/backends/local/sandbox/config.js";
import { bwrapArgs } from "../dist/backends/local/sandbox/bwrap-args.js";

const iterations = Number(process.argv[2] ?? 200);
if (spawnSync("bwrap", ["--version"]).status !== 0) {
  console.log("skipped: bubblewrap (bwrap) is not installed");
  process.exit(0);
}
const work = mkdtempSync("/var/tmp/shellwright-bench-sandbox-");
const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const table = (title, samples, floorName) => {
  const floor = quantile(samples[floorName], 0.5);
  console.log(`\n${title}`);
  console.log("case                                        p50 ms   p90 ms   p50 / floor");
  for (const [name, values] of Object.entries(samples)) {
    const p50 = quantile(values, 0.5);
    console.log(
      `${name.padEnd(42)} ${p50.toFixed(2).padStart(7)}  ${quantile(values, 0.9).toFixed(2).padStart(7)}   ${(p50 / floor).toFixed(2)}x`,
    );
  }
  return floor;
};
const interleave = async (cases, n) => {
  const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let i = 0; i < 10; i++) for (const run of Object.values(cases)) await run();
  for (let i = 0; i < n; i++) {
    for (const [name, run] of Object.entries(cases)) {
      const start = performance.now();
      await run();
      samples[name].push(performance.now() - start);
    }
  }
  return samples;
};

// Opening: the one-time cost (preflight is cached after the first open).
const opens = { "open + close, unsandboxed": [], "open + close, sandbox: true": [] };
for (let i = 0; i < 10; i++) {
  for (const [name, sandbox] of [
    ["open + close, unsandboxed", false],
    ["open + close, sandbox: true", true],
  ]) {
    const start = performance.now();
    const env = await createEnvironment({ backend: "local", cwd: work, sandbox });
    await env.execute("true");
    await env.close();
    opens[name].push(performance.now() - start);
  }
}

const plain = await createEnvironment({ backend: "local", cwd: work });
const boxed = await createEnvironment({ backend: "local", cwd: work, sandbox: true });
// The plain model (fastPath: false, or while the fast path is down) enters the sandbox per call.
const plainNoFast = await createEnvironment({ backend: "local", cwd: work, fastPath: false });
const boxedNoFast = await createEnvironment({ backend: "local", cwd: work, sandbox: true, fastPath: false });
const session = await interleave(
  {
    "execute('true'), unsandboxed (floor)": () => plain.execute("true"),
    "execute('true'), sandbox: true": () => boxed.execute("true"),
    "fastPath: false, unsandboxed": () => plainNoFast.execute("true"),
    "fastPath: false, sandbox: true": () => boxedNoFast.execute("true"),
  },
  iterations,
);
for (const env of [plain, boxed, plainNoFast, boxedNoFast]) await env.close();

const transport = new LocalTransport({ env: {}, sandbox: normalizeSandbox(true), cwd: work });
await transport.start();
const bash = spawnSync("sh", ["-c", "command -v bash"], { encoding: "utf8" }).stdout.trim();
const entered = transport.sandbox.wrap([bash, "-c", "true"], process.env);
// The session's own bwrap arguments (what a per-call bwrap would have to run), minus the info fd.
const sessionArgs = bwrapArgs({ sandbox: transport.sandbox.resolved, stateDir: work });
const infoFd = sessionArgs.indexOf("--info-fd");
const bwrapPerCall = ["bwrap", ...sessionArgs.filter((_, i) => i !== infoFd && i !== infoFd + 1), bash, "-c", "true"];
const run = (argv) => () => {
  const result = spawnSync(argv[0], argv.slice(1), { env: entered.env, stdio: "ignore" });
  if (result.status !== 0) throw new Error(`${argv[0]} exited ${result.status}`);
};
const launch = await interleave(
  {
    "bash -c true (floor)": run([bash, "-c", "true"]),
    "nsenter + setpriv into the session sandbox": run(entered.argv),
    "a fresh bwrap per call (new netns)": run(bwrapPerCall),
  },
  iterations,
);
await transport.stop();
rmSync(work, { recursive: true, force: true });

console.log(`${iterations} iterations of each case, interleaved, after 10 warm-up rounds`);
const floor = table("Per call, through the session", session, "execute('true'), unsandboxed (floor)");
table("Per launch, bare (spawnSync)", launch, "bash -c true (floor)");
table("Per session (10 each)", opens, "open + close, unsandboxed");
const ratio = quantile(session["execute('true'), sandbox: true"], 0.5) / floor;
const ratioNoFast =
  quantile(session["fastPath: false, sandbox: true"], 0.5) / quantile(session["fastPath: false, unsandboxed"], 0.5);
console.log(
  `\nsandboxed / unsandboxed execute('true') p50: ${ratio.toFixed(2)}x (target at most 2.00x: ${ratio <= 2 ? "met" : "missed"})`,
);
console.log(`the same with fastPath: false (the sandbox entered per call): ${ratioNoFast.toFixed(2)}x`);
