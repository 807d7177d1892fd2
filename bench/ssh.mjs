#!/usr/bin/env node
// SSH backend benchmark: per-command latency over the master connection,
// with file sync cached, walked, forced or absent, against a bare
// `ssh -o ControlPath=… host true` floor measured in the same run, call by
// call interleaved so the machine's drift hits every row alike. Also: first
// sync vs. an unchanged one, and what the host's ~/.bashrc costs per call.
//
// Needs the test sshd:  eval "$(scripts/test-env/sshd.sh start)"
// Then:                 npm run build && node bench/ssh.mjs
// Not a test: nothing here fails.

import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { normalizeSshConfig } from "../dist/backends/ssh-config.js";
import { SshTransport } from "../dist/backends/ssh.js";
import { Session } from "../dist/core/session.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 60);
const TREE_FILES = Number(process.env.BENCH_TREE_FILES ?? 300);
const run = promisify(execFile);

const env = process.env;
if (env.SHELLWRIGHT_TEST_SSH !== "1") {
  console.error('bench/ssh.mjs needs the test sshd: eval "$(scripts/test-env/sshd.sh start)" first');
  process.exit(2);
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const summary = (times) => {
  const s = [...times].sort((a, b) => a - b);
  return { p50: pct(s, 0.5), p95: pct(s, 0.95) };
};
const ms = (x) => `${x.toFixed(1)} ms`;
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
async function time(fn) {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

function serverConfig(vars) {
  return {
    host: vars.SHELLWRIGHT_TEST_SSH_HOST,
    port: Number(vars.SHELLWRIGHT_TEST_SSH_PORT),
    user: vars.SHELLWRIGHT_TEST_SSH_USER,
    keyPath: vars.SHELLWRIGHT_TEST_SSH_KEY,
    knownHostsFile: vars.SHELLWRIGHT_TEST_SSH_KNOWN_HOSTS,
    strictHostKeyChecking: "yes",
  };
}

async function open(config) {
  const warn = (message) => console.error(`warning: ${message}`);
  const transport = new SshTransport(normalizeSshConfig(config, warn));
  const session = await Session.open(transport, {
    cwd: "~", timeoutMs: 60_000, maxOutputChars: 50_000, outputHeadFraction: 0.4, killGraceMs: 1000, initTimeoutMs: 30_000, warn,
  });
  return { session, transport };
}

/** The floor: a bare ssh client through a master of its own, `true` on the host. */
function bareSsh(config, controlPath) {
  const args = [
    "-o", `ControlPath=${controlPath}`, "-o", "ControlMaster=auto", "-o", "ControlPersist=120", "-o", "BatchMode=yes",
    "-o", `UserKnownHostsFile=${config.knownHostsFile}`, "-i", config.keyPath, "-p", String(config.port), "-l", config.user, "-T", config.host, "true",
  ];
  return () =>
    new Promise((resolve) => {
      const child = spawn("ssh", args, { stdio: ["ignore", "ignore", "ignore"] });
      child.on("close", resolve);
    });
}

async function privateServer(extraConfig) {
  const dir = join(await mkdtemp(join(os.tmpdir(), "sw-bench-sshd-")), "server");
  const { stdout } = await run("bash", ["scripts/test-env/sshd.sh", "start"], {
    env: { ...env, SHELLWRIGHT_SSHD_DIR: dir, SHELLWRIGHT_SSHD_EXTRA_CONFIG: extraConfig },
  });
  const vars = Object.fromEntries([...stdout.matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1], m[2]]));
  return { vars, stop: () => run("bash", ["scripts/test-env/sshd.sh", "stop"], { env: { ...env, SHELLWRIGHT_SSHD_DIR: dir } }) };
}

async function main() {
  const work = await mkdtemp(join(os.tmpdir(), "sw-bench-ssh-"));
  const local = join(work, "local");
  await mkdir(join(local, "skills"), { recursive: true });
  for (let i = 0; i < TREE_FILES; i++) {
    await mkdir(join(local, "skills", `s${i % 30}`), { recursive: true });
    await writeFile(join(local, "skills", `s${i % 30}`, `f${i}.md`), `skill ${i}\n`.repeat(100));
  }
  for (let i = 0; i < 3; i++) await writeFile(join(local, `cred${i}.json`), `{"token":"${i}"}`);
  const remote = join(work, "remote"); // the host is this machine: loopback sshd
  const sync = (extra, root = remote) => ({
    files: [0, 1, 2].map((i) => ({ local: join(local, `cred${i}.json`), remote: `${root}/creds/cred${i}.json` })),
    directories: [{ local: join(local, "skills"), remote: `${root}/skills` }],
    ...extra,
  });

  const shared = serverConfig(env);
  const plain = await open(shared);
  const cached = await open({ ...shared, sync: sync({}) });
  const walked = await open({ ...shared, sync: sync({ intervalMs: 0 }) });
  const forced = await open({ ...shared, sync: sync({ force: true }) });
  const floor = bareSsh(shared, join(work, "floor.sock"));

  // No rc file: a second server whose sessions start with SHLVL=1, which makes
  // Debian's bash skip ~/.bashrc for `ssh host cmd`.
  const norc = await privateServer("SetEnv SHLVL=1");
  const norcConfig = serverConfig(norc.vars);
  const norcSession = await open(norcConfig);
  const norcFloor = bareSsh(norcConfig, join(work, "norc.sock"));

  const rows = { floor: [], plain: [], cached: [], walked: [], forced: [], norcFloor: [], norcPlain: [] };
  for (let i = 0; i < 5; i++) {
    await floor();
    await norcFloor();
    for (const s of [plain, cached, walked, forced, { session: norcSession.session }]) await s.session.execute("true");
  }
  for (let i = 0; i < CALLS; i++) {
    rows.floor.push(await time(floor));
    rows.plain.push(await time(() => plain.session.execute("true")));
    rows.cached.push(await time(() => cached.session.execute("true")));
    rows.walked.push(await time(() => walked.session.execute("true")));
    rows.forced.push(await time(() => forced.session.execute("true")));
    rows.norcFloor.push(await time(norcFloor));
    rows.norcPlain.push(await time(() => norcSession.session.execute("true")));
  }

  // The sync step alone, on a fresh session: the first sync, then unchanged ones.
  const fresh = await open({ ...shared, sync: sync({ intervalMs: 0 }, `${remote}-fresh`) });
  const syncer = fresh.transport.fileSync;
  const firstSync = await time(() => syncer.sync());
  const unchanged = [];
  const forcedSync = [];
  for (let i = 0; i < 20; i++) {
    unchanged.push(await time(() => syncer.sync()));
    forcedSync.push(await time(() => syncer.sync({ force: true })));
  }

  for (const s of [plain, cached, walked, forced, fresh, norcSession]) await s.session.close();
  await norc.stop();
  await rm(work, { recursive: true, force: true });
  await rm(`${remote}-fresh`, { recursive: true, force: true });

  const f = summary(rows.floor);
  const nf = summary(rows.norcFloor);
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  console.log(`# SSH backend benchmark\n\n${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} × ${cpu}, Node ${process.version}, OpenSSH on 127.0.0.1.`);
  console.log(`Sync set: 3 credential files + a directory of ${TREE_FILES} files in 30 subdirectories.\n`);
  console.log(`## Per-command latency, \`execute("true")\` (${CALLS} calls per row, interleaved)\n`);
  console.log("| row | p50 | p95 | p50 vs floor |");
  console.log("|---|---|---|---|");
  const line = (name, s, base) => console.log(`| ${name} | ${ms(s.p50)} | ${ms(s.p95)} | ${ratio(s.p50, base.p50)} |`);
  line("(c) floor: bare `ssh -o ControlPath=… host true`", f, f);
  line("no sync configured", summary(rows.plain), f);
  line("(a) sync configured, unchanged (default 5 s interval)", summary(rows.cached), f);
  line("(a') sync configured, unchanged, interval 0 (tree walked every call)", summary(rows.walked), f);
  line("(b) sync forced every call", summary(rows.forced), f);
  console.log(`\nForced vs cached (b)/(a) at p50: ${ratio(summary(rows.forced).p50, summary(rows.cached).p50)}.`);
  console.log(`\n## What the host's ~/.bashrc costs (root's here runs \`pyenv init\`)\n`);
  console.log("| row | p50 | p95 |");
  console.log("|---|---|---|");
  console.log(`| floor, ~/.bashrc read (sshd default) | ${ms(f.p50)} | ${ms(f.p95)} |`);
  console.log(`| floor, ~/.bashrc skipped (server sets SHLVL=1) | ${ms(nf.p50)} | ${ms(nf.p95)} |`);
  console.log(`| backend \`true\`, ~/.bashrc skipped | ${ms(summary(rows.norcPlain).p50)} | ${ms(summary(rows.norcPlain).p95)} |`);
  console.log(`\nWithout the rc file the backend's p50 is ${ratio(summary(rows.norcPlain).p50, nf.p50)} its floor.`);
  const u = summary(unchanged);
  const fs = summary(forcedSync);
  console.log(`\n## The sync step alone (FileSync.sync over rsync)\n`);
  console.log("| what | time |");
  console.log("|---|---|");
  console.log(`| first sync (everything transferred) | ${ms(firstSync)} |`);
  console.log(`| forced sync, nothing changed (p50 of 20) | ${ms(fs.p50)} |`);
  console.log(`| unchanged, tree walked, no process (p50 of 20) | ${ms(u.p50)} |`);
  console.log(`| unchanged, inside the interval | not walked at all |`);
}

await main();
