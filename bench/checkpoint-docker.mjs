#!/usr/bin/env node
// Checkpoint, rollback and fork of a docker session with a 200 MB workspace in the container
// (docs/branching.md), beside floors measured in the same run, round by round:
//   copy floor     one Engine API exec of the `cp -a` a checkpoint (or a rollback) makes
//   commit         `docker commit` of the container (the other means: the whole container), and a
//                  rollback by it: a new container from that image, started, answering an exec
//   fork floor     16 containers of the test image created and started (8 at a time, as fork does),
//                  each answering one exec, then removed
//   fork           env.fork({ count: 16 }) until every child answered `true` to execute()
// Run after `npm run build`, with a Docker Engine and the test image (scripts/test-env/docker.sh):
//   node bench/checkpoint-docker.mjs   (BENCH_RUNS, BENCH_FORK_RUNS, BENCH_WORKSPACE_MB, BENCH_FORK_COUNT)
// Not a test: nothing here fails.

import { spawnSync } from "node:child_process";
import os from "node:os";
import { createEnvironment } from "../dist/index.js";
import { EngineApi, defaultSocketPath } from "../dist/backends/docker/engine.js";
import { startExec } from "../dist/backends/docker/exec.js";
import { printFloorTable } from "./floor-table.mjs";

if (process.env.SHELLWRIGHT_TEST_DOCKER !== "1") {
  console.log("skipped: set SHELLWRIGHT_TEST_DOCKER=1 with a running engine and the test image");
  process.exit(0);
}
const image = process.env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm";
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const FORK_RUNS = Number(process.env.BENCH_FORK_RUNS ?? 2);
const MB = Number(process.env.BENCH_WORKSPACE_MB ?? 200);
const COUNT = Number(process.env.BENCH_FORK_COUNT ?? 16);
const engine = new EngineApi(defaultSocketPath());
const docker = (...args) => spawnSync("docker", args, { encoding: "utf8" });

async function exec(container, script) {
  const handle = startExec(engine, { containerId: container, cmd: ["bash", "-c", script] });
  let out = "";
  for await (const chunk of handle.output) out += Buffer.from(chunk).toString();
  const code = await handle.wait();
  if (code !== 0) throw new Error(`exec exited ${code}: ${out}`);
  return out;
}

async function timed(list, run) {
  const started = performance.now();
  const result = await run();
  list.push(performance.now() - started);
  return result;
}

const env = await createEnvironment({
  backend: "docker",
  image,
  network: false,
  workspace: "/work",
  cwd: "/",
  workspaceMaxBytes: 2 * MB * 1024 * 1024,
});
const container = (await env.execute("cat /etc/hostname")).output.trim();
await env.execute(`mkdir /work && for i in $(seq ${MB}); do head -c 1048576 /dev/urandom > /work/f$i; done`);
const times = {
  floorSave: [],
  save: [],
  floorRestore: [],
  restore: [],
  commit: [],
  commitRun: [],
  floorFork: [],
  fork: [],
};

/** A new container from `from`, started, answering one exec; removed after. */
async function runFrom(from) {
  const id = docker("run", "-d", "--network", "none", from, "sleep", "infinity").stdout.trim();
  await exec(id, "true");
  return id;
}

try {
  for (let i = 0; i < RUNS; i++) {
    await timed(times.floorSave, () => exec(container, "cp -a /work /tmp/floor"));
    await timed(times.floorRestore, () => exec(container, "cp -a /tmp/floor /.floor-restore"));
    await exec(container, "rm -rf /tmp/floor /.floor-restore");

    const checkpoint = await timed(times.save, () => env.checkpoint());
    await env.execute(`head -c 1048576 /dev/urandom > /work/f${(i % MB) + 1}`);
    await timed(times.restore, () => env.rollback(checkpoint));
    await env.releaseCheckpoint(checkpoint);

    // The other means: the whole container committed, and a rollback by a new container from that image.
    const committed = await timed(times.commit, async () => {
      const response = await engine.request("POST", `/commit?container=${container}&pause=true`, undefined, 600_000);
      return response.json.Id;
    });
    const id = await timed(times.commitRun, () => runFrom(committed));
    docker("rm", "-f", id);
    docker("rmi", committed);
  }
  for (let i = 0; i < FORK_RUNS; i++) {
    const floor = await timed(times.floorFork, async () => {
      const ids = [];
      const worker = async () => {
        while (ids.length < COUNT) {
          const slot = ids.push(undefined) - 1;
          ids[slot] = await runFrom(image);
        }
      };
      await Promise.all(Array.from({ length: Math.min(8, COUNT) }, worker));
      return ids;
    });
    docker("rm", "-f", ...floor);
    const children = await timed(times.fork, async () => {
      const forked = await env.fork({ count: COUNT });
      await Promise.all(forked.map(async (child) => (await child.execute("true")).exitCode));
      return forked;
    });
    for (const child of children) await child.close();
  }
} finally {
  await env.close();
  engine.close();
}

const info = docker("info", "--format", "{{.ServerVersion}} {{.Driver}}").stdout.trim();
console.log(
  `Docker checkpoint of a ${MB} MB workspace (${MB} files of 1 MB) in the container, 1 MB changed before each ` +
    `rollback; engine ${info}; ${RUNS} rounds, fork of ${COUNT} ${FORK_RUNS} times (load average ${os.loadavg()[0].toFixed(2)})\n`,
);
printFloorTable([
  ["floor: one exec of `cp -a` of the workspace into the temp dir", times.floorSave, times.floorSave],
  ["checkpoint()", times.save, times.floorSave],
  ["`docker commit` of the container (the other means)", times.commit, times.floorSave],
  ["floor: one exec of `cp -a` of that copy beside the root", times.floorRestore, times.floorRestore],
  ["rollback() (1 MB changed)", times.restore, times.floorRestore],
  ["rollback by commit: a container from the image, started, one exec", times.commitRun, times.floorRestore],
  [`floor: ${COUNT} containers of the image started, one exec each`, times.floorFork, times.floorFork],
  [`fork({ count: ${COUNT} }) until every child answered`, times.fork, times.floorFork],
]);
