#!/usr/bin/env node
// The local fast path (docs/fast-path.md) against floors measured in the same
// run, interleaved round by round (this machine is shared; absolute times drift):
//   execute('true'), light and heavy (150 functions + 150 aliases) state, vs a
//   bare spawn('bash', ['-c', 'true'])                      targets ≤ 0.6x / ≤ 0.8x
//   8 concurrent calls/s, fast vs plain (fastPath: false)   target  ≥ 2x
//   135 MB of output vs a bare spawn whose bytes Node only counts   target ≤ 1.2x, flat memory
//   docker execute('true') vs one Engine API exec (SHELLWRIGHT_TEST_DOCKER=1)   target ≤ 0.15x
//   ssh (when the test sshd runs: SHELLWRIGHT_TEST_SSH=1, scripts/test-env/sshd.sh):
//   execute('true'), fast and plain, vs a bare `ssh host true` over the session's master   target ≤ 0.4x
import { spawn } from "node:child_process";
import { createEnvironment } from "../dist/index.js";
import { normalizeSshConfig } from "../dist/backends/ssh/config.js";
import { SshTransport } from "../dist/backends/ssh/transport.js";
import { Session } from "../dist/core/session.js";
import { sessionOptions } from "../dist/backends/shared/config.js";

const N = Number(process.env.N ?? 300);
const ROUNDS = 3;
const now = () => performance.now();
const p50 = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const round2 = (x) => Math.round(x * 100) / 100;

function bare(script) {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", script], { stdio: ["ignore", "pipe", "ignore"] });
    let bytes = 0;
    child.stdout.on("data", (d) => (bytes += d.length));
    child.on("close", () => resolve(bytes));
  });
}
async function p50Of(n, fn) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const a = now();
    await fn();
    times.push(now() - a);
  }
  return p50(times);
}
async function throughput(total, concurrency, fn) {
  let i = 0;
  const a = now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (i++ < total) await fn();
    }),
  );
  return total / ((now() - a) / 1000);
}
function rssSampler() {
  let max = process.memoryUsage().rss;
  const start = max;
  const timer = setInterval(() => (max = Math.max(max, process.memoryUsage().rss)), 10);
  return () => {
    clearInterval(timer);
    return Math.round((max - start) / 2 ** 20);
  };
}
async function openReady(options) {
  const env = await createEnvironment({ backend: "local", cwd: "/tmp", ...options });
  await env.execute("true");
  await new Promise((r) => setTimeout(r, 200));
  await env.execute("true");
  return env;
}

const out = {};
const heavyState = Array.from(
  { length: 150 },
  (_, i) => `fn_${i}() { echo "f${i} $1"; }; alias al_${i}='echo a${i}'`,
).join("\n");
// BENCH_ONLY=docker skips the local cases.
for (const kind of process.env.BENCH_ONLY === "docker" ? [] : ["light", "heavy"]) {
  const fast = await openReady({});
  const plain = await openReady({ fastPath: false });
  if (kind === "heavy")
    for (const env of [fast, plain]) {
      await env.execute(heavyState);
      await env.execute("true");
      await new Promise((r) => setTimeout(r, 200));
      await env.execute("true");
    }
  const floor = [],
    f = [],
    p = [];
  for (let r = 0; r < ROUNDS; r++) {
    floor.push(await p50Of(N / ROUNDS, () => bare("true")));
    f.push(await p50Of(N / ROUNDS, () => fast.execute("true")));
    p.push(await p50Of(N / ROUNDS, () => plain.execute("true")));
  }
  out[kind] = { floor_bare_spawn_ms: round2(median(floor)), fast_ms: round2(median(f)), plain_ms: round2(median(p)) };
  out[kind].fast_ratio = round2(median(f) / median(floor));
  out[kind].plain_ratio = round2(median(p) / median(floor));
  if (kind === "light") {
    const fastTput = await throughput(400, 8, () => fast.execute("true"));
    const plainTput = await throughput(400, 8, () => plain.execute("true"));
    out.concurrent8 = {
      fast_per_s: Math.round(fastTput),
      plain_per_s: Math.round(plainTput),
      ratio: round2(fastTput / plainTput),
    };
    const cmd = "head -c 141557760 /dev/zero";
    let a = now();
    let rss = rssSampler();
    const bareBytes = await bare(cmd);
    const bareMs = now() - a;
    const bareRss = rss();
    let bytes = 0;
    a = now();
    rss = rssSampler();
    const r = await fast.execute(cmd, { onOutput: (t) => (bytes += t.length) });
    const fastMs = now() - a;
    const fastRss = rss();
    out.output135mb = {
      count_only_ms: Math.round(bareMs),
      fast_ms: Math.round(fastMs),
      ratio: round2(fastMs / bareMs),
      bytes_ok: bytes === bareBytes && r.exitCode === 0,
      rss_growth_mb_count_only: bareRss,
      rss_growth_mb_fast: fastRss,
    };
  }
  await fast.close();
  await plain.close();
}
// Docker (with SHELLWRIGHT_TEST_DOCKER=1): execute('true') on the fast path
// (the helper in the container, one long-lived exec) and on the plain path,
// against one bare Engine API exec of `true` in the same container.
if (process.env.SHELLWRIGHT_TEST_DOCKER === "1") {
  const { EngineApi, defaultSocketPath } = await import("../dist/backends/docker/engine.js");
  const { startExec } = await import("../dist/backends/docker/exec.js");
  const image = process.env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm";
  const calls = [];
  const fast = await createEnvironment({ backend: "docker", image, network: false, trace: (c) => calls.push(c) });
  const plain = await createEnvironment({ backend: "docker", image, network: false, fastPath: false });
  for (const env of [fast, plain]) await env.execute("true");
  await new Promise((r) => setTimeout(r, 1000));
  const containerId = calls.flatMap((c) =>
    c.via === "api" ? (/^\/containers\/([0-9a-f]{64})\/exec$/.exec(c.path)?.[1] ?? []) : [],
  )[0];
  const engine = new EngineApi(defaultSocketPath());
  const apiExec = async () => {
    const exec = startExec(engine, { containerId, cmd: ["true"] });
    for await (const chunk of exec.output) void chunk;
    await exec.wait();
  };
  const n = Number(process.env.N_DOCKER ?? 150);
  const floor = [],
    f = [],
    p = [];
  for (let r = 0; r < ROUNDS; r++) {
    floor.push(await p50Of(n / ROUNDS, apiExec));
    f.push(await p50Of(n / ROUNDS, () => fast.execute("true")));
    p.push(await p50Of(n / ROUNDS, () => plain.execute("true")));
  }
  out.docker = {
    floor_api_exec_ms: round2(median(floor)),
    fast_ms: round2(median(f)),
    plain_ms: round2(median(p)),
    fast_ratio: round2(median(f) / median(floor)),
    plain_ratio: round2(median(p) / median(floor)),
  };
  engine.close();
  await fast.close();
  await plain.close();
}
if (process.env.SHELLWRIGHT_TEST_SSH === "1") out.ssh = await sshCase();
out.targets = {
  ...(out.light === undefined ? {} : localTargets()),
  ...(out.docker === undefined ? {} : { docker_le_0_15: out.docker.fast_ratio <= 0.15 }),
  ...(out.ssh === undefined ? {} : { ssh_le_0_4: out.ssh.fast_ratio <= 0.4 }),
};
console.log(JSON.stringify(out, null, 1));

function localTargets() {
  return {
    light_le_0_6: out.light.fast_ratio <= 0.6,
    heavy_le_0_8: out.heavy.fast_ratio <= 0.8,
    concurrent8_ge_2: out.concurrent8.ratio >= 2,
    output135mb_le_1_2: out.output135mb.ratio <= 1.2,
  };
}

/** The ssh fast path against a bare `ssh host true` through the fast session's own master, interleaved. */
async function sshCase() {
  const e = process.env;
  const config = {
    host: e.SHELLWRIGHT_TEST_SSH_HOST,
    port: Number(e.SHELLWRIGHT_TEST_SSH_PORT),
    user: e.SHELLWRIGHT_TEST_SSH_USER,
    keyPath: e.SHELLWRIGHT_TEST_SSH_KEY,
    knownHostsFile: e.SHELLWRIGHT_TEST_SSH_KNOWN_HOSTS,
    strictHostKeyChecking: "yes",
  };
  const open = async (fastPath) => {
    const transport = new SshTransport(normalizeSshConfig({ ...config, fastPath }, () => undefined));
    const session = await Session.open(transport, sessionOptions({}, "/tmp"));
    for (let i = 0; i < 50 && (await transport.fastPathRunner?.whenReady()) !== true; i++) {
      await session.execute("true");
      await new Promise((r) => setTimeout(r, 50));
    }
    await session.execute("true");
    return { session, transport };
  };
  const fast = await open(true);
  const plain = await open(false);
  const args = [
    "-o",
    `ControlPath=${fast.transport.controlPath}`,
    "-p",
    String(config.port),
    "-l",
    config.user,
    "-T",
    config.host,
    "true",
  ];
  const bareSsh = () =>
    new Promise((resolve) => spawn("ssh", args, { stdio: ["ignore", "ignore", "ignore"] }).on("close", resolve));
  const n = Math.max(30, Math.round(N / 3));
  const floor = [],
    f = [],
    p = [];
  for (let r = 0; r < ROUNDS; r++) {
    floor.push(await p50Of(n / ROUNDS, bareSsh));
    f.push(await p50Of(n / ROUNDS, () => fast.session.execute("true")));
    p.push(await p50Of(n / ROUNDS, () => plain.session.execute("true")));
  }
  await fast.session.close();
  await plain.session.close();
  return {
    floor_bare_ssh_true_ms: round2(median(floor)),
    fast_ms: round2(median(f)),
    plain_ms: round2(median(p)),
    fast_ratio: round2(median(f) / median(floor)),
    plain_ratio: round2(median(p) / median(floor)),
  };
}
