#!/usr/bin/env node
// close() of a session with many pseudo-terminal processes running, beside
// the floor: the same session kind closed with as many plain background
// processes. Each PTY runs `cat` (nothing to do until it is ended); each
// plain process runs `sleep`. The figure is the time of `session.close()`
// alone, after every process was seen running.
//
//   npm run build && node bench/pty-close.mjs
// Backends: local and the gateway (in this process, over loopback HTTP, local
// behind it) always; ssh with SHELLWRIGHT_TEST_SSH* set and docker with
// SHELLWRIGHT_TEST_DOCKER=1 (scripts/test-env/). BENCH_PTYS sets the count
// (default 40), BENCH_BACKENDS=local,docker a subset.
// Not a test: nothing here fails.

import { randomBytes } from "node:crypto";
import { createEnvironment, processRegistry, startGateway } from "../dist/index.js";
import { sshBenchConfig } from "./test-env.mjs";

const COUNT = Number(process.env.BENCH_PTYS ?? 40);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const env = process.env;

const token = randomBytes(24).toString("hex");
// Each PTY holds one execution open (its output's follower): room for them all.
const gateway = await startGateway({
  token,
  port: 0,
  allowedRoots: ["/"],
  cwd: "/tmp",
  log: () => undefined,
  maxConcurrentExecutions: 4 * COUNT,
});
const backends = [
  { name: "local", config: { backend: "local" } },
  { name: "gateway", config: { backend: "gateway", url: gateway.url, token } },
];
const ssh = sshBenchConfig(env);
if (ssh) backends.push({ name: "ssh", config: { ...ssh } });
if (env.SHELLWRIGHT_TEST_DOCKER === "1") {
  backends.push({
    name: "docker",
    // Each PTY is several processes in the container (wrapper, stdin holder, helper, program, output follower):
    // 40 of them do not fit the default pidsLimit (256).
    config: {
      backend: "docker",
      image: env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm",
      network: false,
      pidsLimit: 1024,
    },
  });
}

/** Opens a session, starts `count` processes, and times close(). */
async function closeTime(config, count, pty) {
  const session = await createEnvironment(config);
  const registry = processRegistry(session, {
    bufferChars: 200_000,
    maxProcesses: count + 8,
    finishedTtlMs: 1_800_000,
    killGraceMs: 2_000,
    watchIntervalMs: 200,
  });
  const processes = [];
  for (let i = 0; i < count; i++) {
    processes.push(await registry.spawn(pty ? "cat" : "sleep 600", pty ? { pty: { cols: 80, rows: 24 } } : {}));
  }
  await registry.refresh();
  const running = registry.all().filter((p) => p.status === "running").length;
  if (running !== count) throw new Error(`only ${running} of ${count} running`);
  const t = performance.now();
  await session.close();
  return performance.now() - t;
}

const fmt = (x) => `${(x / 1000).toFixed(2)} s`;
const only = env.BENCH_BACKENDS?.split(",");
for (const { name, config, count = COUNT } of backends) {
  if (only && !only.includes(name)) continue;
  const ptys = [];
  const plain = [];
  for (let round = 0; round < ROUNDS; round++) {
    plain.push(await closeTime(config, count, false));
    ptys.push(await closeTime(config, count, true));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    `${name.padEnd(8)} close() with ${count} PTYs: ${fmt(median(ptys))} (runs ${ptys.map(fmt).join(", ")}); ` +
      `floor, ${count} plain background processes: ${fmt(median(plain))}; ratio ${(median(ptys) / median(plain)).toFixed(1)}x`,
  );
}
await gateway.close();
