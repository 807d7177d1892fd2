#!/usr/bin/env node
// Warm pools (docs/pools.md, issue 25) against the plain open, measured in the
// same run and interleaved sample by sample (this machine is shared; absolute
// times drift, the ratios are the figures):
//   warm acquire + first call, p50            vs createEnvironment + first call   targets: local <= 10 ms, docker <= 30 ms
//   a burst of 2 x size acquires at once      vs the same burst of plain opens    target: not slower
//   idle cost per member: processes and PSS outside Node (what the pool's members add while they wait)
//   refill: members per second the pool opens back after it was drained (refillConcurrency 1 and 2)
// The floor for the local open is a bare `bash -l -c true` (a session must read the login profile).
// Docker (SHELLWRIGHT_TEST_DOCKER=1 and the test image) and ssh (the test sshd's SHELLWRIGHT_TEST_SSH*) run
// after local, then a gateway in this process; BENCH_ONLY=local|docker|ssh|gateway picks one.
//   npm run build && node bench/pool.mjs
import { spawn, execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { createEnvironment, createEnvironmentPool, startGateway } from "../dist/index.js";
import { DOCKER_LABEL, OWNER_LABEL } from "../dist/backends/docker/labels.js";

const SIZE = Number(process.env.POOL_SIZE ?? 4);
const image = process.env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm";
const now = () => performance.now();
const p50 = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

function bareLogin() {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-l", "-c", "true"], { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", resolve);
  });
}

async function firstCall(env) {
  const result = await env.execute("true");
  if (result.exitCode !== 0) throw new Error(`first call exited ${result.exitCode}: ${result.output}`);
}

/** Time to a session that answered its first call, and how much of it the open took; the close is not counted (it is the caller's, later). */
async function timed(open) {
  const started = now();
  const env = await open();
  const opened = now() - started;
  await firstCall(env);
  const ms = now() - started;
  await env.close();
  return { ms, opened };
}
async function timeOf(fn) {
  const started = now();
  await fn();
  return now() - started;
}

/** Wall time until every one of `count` opens at once has answered its first call. */
async function burst(count, open) {
  const started = now();
  const envs = await Promise.all(
    Array.from({ length: count }, async () => {
      const env = await open();
      await firstCall(env);
      return env;
    }),
  );
  const ms = now() - started;
  await Promise.all(envs.map((env) => env.close()));
  return ms;
}

/** Members per second the pool opens back after being drained. */
async function refillRate(config, refillConcurrency) {
  const pool = await createEnvironmentPool(config, { size: SIZE, refillConcurrency });
  await pool.ready();
  const taken = [];
  for (let i = 0; i < SIZE; i++) taken.push(await pool.acquire());
  const started = now();
  await pool.ready();
  const perSecond = SIZE / ((now() - started) / 1000);
  await Promise.all(taken.map((env) => env.close()));
  await pool.close();
  return round(perSecond, 2);
}

// ---- what a member costs while idle: processes and PSS outside Node ----

function stat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    return { comm: text.slice(text.indexOf("(") + 1, close), ppid: Number(text.slice(close + 2).split(" ")[1]) };
  } catch {
    return undefined;
  }
}
function pssKiB(pid) {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}
/** Every live process below `root` (not `root` itself). */
function descendants(root) {
  const parent = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(name);
    if (s) parent.set(Number(name), s.ppid);
  }
  const below = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        below.push(pid);
        break;
      }
    }
  }
  return below;
}
/** The processes a docker member adds on the host: its container's (from `docker top`) and the runtime's shim. */
function containerProcesses(container) {
  const pids = execFileSync("docker", ["top", container, "-eo", "pid"], { encoding: "utf8" })
    .split("\n")
    .slice(1)
    .map(Number)
    .filter((pid) => pid > 0);
  const shim = pids.length > 0 ? stat(pids[0])?.ppid : undefined;
  return shim !== undefined && stat(shim)?.comm.startsWith("containerd-shim") ? [...pids, shim] : pids;
}
async function idleCost(config, processesOf) {
  const before = processesOf(undefined);
  const pool = await createEnvironmentPool(config, { size: SIZE });
  await pool.ready();
  // A moment for every member's helper to settle (the refill is done once ready() resolves).
  await new Promise((resolve) => setTimeout(resolve, 500));
  const after = (await processesOf(pool)).filter((pid) => !before.includes(pid));
  const kib = after.reduce((sum, pid) => sum + pssKiB(pid), 0);
  const names = [...new Set(after.map((pid) => stat(pid)?.comm ?? "?"))].sort().join(", ");
  await pool.close();
  return { processes: round(after.length / SIZE, 1), pss_mib: round(kib / 1024 / SIZE, 2), names };
}

// ---- one backend ----

async function measure(name, config, { samples, floor }) {
  const pool = await createEnvironmentPool(config, { size: SIZE });
  const warm = [];
  const plain = [];
  const floors = [];
  const acquireOnly = [];
  for (let i = 0; i < samples + 2; i++) {
    // The pool is full before each warm sample: this is warm acquire, not the refill.
    await pool.ready();
    const w = await timed(() => pool.acquire());
    const p = await timed(() => createEnvironment(config));
    const f = floor === undefined ? undefined : await timeOf(floor);
    if (i < 2) continue;
    warm.push(w.ms);
    acquireOnly.push(w.opened);
    plain.push(p.ms);
    if (f !== undefined) floors.push(f);
  }
  await pool.ready();
  const burstWarm = await burst(2 * SIZE, () => pool.acquire());
  await pool.close();
  const burstPlain = await burst(2 * SIZE, () => createEnvironment(config));
  const out = {
    samples,
    warm_acquire_first_call_p50_ms: round(p50(warm)),
    of_which_acquire_p50_ms: round(p50(acquireOnly)),
    plain_open_first_call_p50_ms: round(p50(plain)),
    warm_vs_plain: round(p50(warm) / p50(plain), 3),
    [`burst_${2 * SIZE}_pooled_ms`]: round(burstWarm),
    [`burst_${2 * SIZE}_plain_ms`]: round(burstPlain),
    burst_pooled_vs_plain: round(burstWarm / burstPlain, 2),
  };
  if (floors.length > 0) {
    out.floor_ms = round(p50(floors));
    out.plain_vs_floor = round(p50(plain) / p50(floors), 2);
  }
  out.refill_per_s = { concurrency1: await refillRate(config, 1), concurrency2: await refillRate(config, 2) };
  console.log(`\n${name} (pool size ${SIZE}):`);
  console.log(JSON.stringify(out, null, 2));
  return out;
}

const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
console.log(
  `pool bench, pool size ${SIZE}; load average at start ${load()} (shared machine: 2 cores, other work beside)`,
);

const only = (name) => process.env.BENCH_ONLY === undefined || process.env.BENCH_ONLY === name;
if (only("local")) {
  const config = { backend: "local", cwd: "/tmp" };
  await measure("local", config, { samples: Number(process.env.N ?? 40), floor: bareLogin });
  const cost = await idleCost(config, () => descendants(process.pid));
  console.log(`local idle cost per member: ${JSON.stringify(cost)}`);
}
if (only("docker") && process.env.SHELLWRIGHT_TEST_DOCKER === "1") {
  const config = { backend: "docker", image, network: false };
  await measure("docker", config, { samples: Number(process.env.N_DOCKER ?? 12) });
  // The containers this process's pool opened: labelled with this process as their owner.
  const ownerValue = `${hostname()}/${process.pid}`;
  const ours = () =>
    execFileSync(
      "docker",
      [
        "ps",
        "-q",
        "--no-trunc",
        "--filter",
        `label=${DOCKER_LABEL}=1`,
        "--filter",
        `label=${OWNER_LABEL}=${ownerValue}`,
      ],
      { encoding: "utf8" },
    )
      .split("\n")
      .filter(Boolean);
  const cost = await idleCost(config, (pool) =>
    pool === undefined
      ? descendants(process.pid)
      : [...ours().flatMap(containerProcesses), ...descendants(process.pid)],
  );
  console.log(`docker idle cost per member: ${JSON.stringify(cost)}`);
} else if (only("docker")) {
  console.log("\ndocker: skipped (set SHELLWRIGHT_TEST_DOCKER=1 with a running engine and the test image)");
}
// The test sshd (scripts/test-env/sshd.sh sets these): open time, refill, and the idle cost on both sides (the
// sshd is on this machine: its per-connection processes and what runs under them are the host's side).
if (only("ssh") && process.env.SHELLWRIGHT_TEST_SSH === "1") {
  const e = process.env;
  const config = {
    backend: "ssh",
    host: e.SHELLWRIGHT_TEST_SSH_HOST,
    port: Number(e.SHELLWRIGHT_TEST_SSH_PORT),
    user: e.SHELLWRIGHT_TEST_SSH_USER,
    keyPath: e.SHELLWRIGHT_TEST_SSH_KEY,
    knownHostsFile: e.SHELLWRIGHT_TEST_SSH_KNOWN_HOSTS,
    strictHostKeyChecking: "yes",
  };
  await measure("ssh (loopback sshd)", config, { samples: Number(process.env.N_SSH ?? 10) });
  const listener = Number(readFileSync(`${e.SHELLWRIGHT_TEST_SSHD_DIR}/sshd.pid`, "utf8"));
  const cost = await idleCost(config, () => [...descendants(process.pid), ...descendants(listener)]);
  console.log(`ssh idle cost per member (this side and the host's): ${JSON.stringify(cost)}`);
} else if (only("ssh")) {
  console.log("\nssh: skipped (source the test sshd's environment: SHELLWRIGHT_TEST_SSH=1 …)");
}
// A gateway in this process, local behind it: a member is a client of one server-side session.
if (only("gateway")) {
  const token = randomBytes(24).toString("hex");
  const gateway = await startGateway({ token, port: 0, allowedRoots: ["/"], cwd: "/tmp", log: () => undefined });
  const config = { backend: "gateway", url: gateway.url, token };
  await measure("gateway (in this process, loopback HTTP)", config, { samples: Number(process.env.N ?? 40) });
  const cost = await idleCost(config, () => descendants(process.pid));
  console.log(`gateway idle cost per member (the server's side): ${JSON.stringify(cost)}`);
  await gateway.close();
}
console.log(`load average at end ${load()}`);
