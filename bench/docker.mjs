// Per-call cost of the docker backend beside its floors, measured in the same run:
//   cli floor  `docker exec C bash -c true` (the CLI path)
//   api floor  one Engine API exec of `bash -c true` (the path the backend uses)
//   session    env.execute("true") (wrapper, snapshot source/dump, marker)
// The three are interleaved call by call so machine noise hits them alike.
// Run after `npm run build`, with a Docker Engine and the test image
// (scripts/test-env/docker.sh):  node bench/docker.mjs [calls]
import { spawn } from "node:child_process";
import { createEnvironment } from "../dist/index.js";
import { EngineApi, defaultSocketPath } from "../dist/backends/docker/engine.js";
import { startExec } from "../dist/backends/docker/exec.js";

const image = process.env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm";
const calls = Number(process.argv[2] ?? 60);
const warmup = 5;

const env = await createEnvironment({ backend: "docker", image });
const container = (await env.execute("cat /etc/hostname")).output.trim();
const engine = new EngineApi(defaultSocketPath());

const paths = {
  "cli floor": () =>
    new Promise((resolve, reject) => {
      const child = spawn("docker", ["exec", container, "bash", "-c", "true"], { stdio: "ignore" });
      child.once("error", reject);
      child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`docker exec exited ${code}`))));
    }),
  "api floor": async () => {
    const handle = startExec(engine, { containerId: container, cmd: ["bash", "-c", "true"] });
    for await (const chunk of handle.output) void chunk;
    const code = await handle.wait();
    if (code !== 0) throw new Error(`api exec exited ${code}`);
  },
  session: async () => {
    const result = await env.execute("true");
    if (result.exitCode !== 0) throw new Error(`execute exited ${result.exitCode}: ${result.output}`);
  },
};

const samples = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
for (let i = 0; i < warmup + calls; i++) {
  for (const [name, run] of Object.entries(paths)) {
    const started = performance.now();
    await run();
    if (i >= warmup) samples[name].push(performance.now() - started);
  }
}
engine.close();
await env.close();

const quantile = (xs, q) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const stats = Object.fromEntries(
  Object.entries(samples).map(([name, xs]) => [name, { p50: quantile(xs, 0.5), p95: quantile(xs, 0.95) }]),
);
const api = stats["api floor"];
console.log(`docker backend, ${calls} calls per path (interleaved), image ${image}`);
console.log("path        p50 ms   p95 ms   p50 / api floor");
for (const [name, { p50, p95 }] of Object.entries(stats)) {
  console.log(
    `${name.padEnd(10)} ${p50.toFixed(1).padStart(7)} ${p95.toFixed(1).padStart(8)}   ${(p50 / api.p50).toFixed(2)}`,
  );
}
console.log(`cli floor / api floor (p50): ${(stats["cli floor"].p50 / api.p50).toFixed(2)}`);
console.log(
  `session overhead over the api floor (p50): ${(((stats.session.p50 - api.p50) / api.p50) * 100).toFixed(1)} % (target <= 10 %)`,
);
