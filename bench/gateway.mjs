// Per-call cost of the gateway hop: p50 of `execute("true")` through
// gateway → serve → local on loopback, against the local backend called
// directly, in the same run. Target: the hop adds at most 2 ms at p50.
//
// Calls alternate (direct, gateway, direct, …) so the noise of a shared
// machine hits both sides alike; the hop is the median of the paired
// differences. Run after `npm run build`: node bench/gateway.mjs [calls]

import { createEnvironment, startGateway } from "../dist/index.js";

const CALLS = Number(process.argv[2] ?? 600);
const WARMUP = 50;
const TOKEN = `bench-${Math.random().toString(16).slice(2)}-token`;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p90 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)];

async function timed(env) {
  const started = performance.now();
  const r = await env.execute("true");
  if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}`);
  return performance.now() - started;
}

const gateway = await startGateway({ token: TOKEN, port: 0, allowedRoots: ["/"], cwd: "/tmp", log: () => undefined });
const direct = await createEnvironment({ backend: "local", cwd: "/tmp" });
const remote = await createEnvironment({ backend: "gateway", url: gateway.url, token: TOKEN });
for (let i = 0; i < WARMUP; i++) {
  await timed(direct);
  await timed(remote);
}
const d = [];
const g = [];
for (let i = 0; i < CALLS; i++) {
  d.push(await timed(direct));
  g.push(await timed(remote));
}
await remote.close();
await direct.close();
await gateway.close();

const hop = median(g.map((ms, i) => ms - d[i]));
const f = (ms) => `${ms.toFixed(2)} ms`;
console.log(
  `gateway hop: ${CALLS} alternating calls of execute("true"), gateway and serve in one process, loopback HTTP`,
);
console.log(`  local direct   p50 ${f(median(d))}  p90 ${f(p90(d))}   (floor)`);
console.log(`  via gateway    p50 ${f(median(g))}  p90 ${f(p90(g))}   ratio ${(median(g) / median(d)).toFixed(2)}x`);
console.log(
  `  hop adds       p50 ${f(median(g) - median(d))}; median of paired differences ${f(hop)}  (target <= 2 ms: ${hop <= 2 ? "met" : "NOT met"})`,
);
