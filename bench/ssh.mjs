#!/usr/bin/env node
// SSH backend benchmark: per-command latency over the master connection,
// with file sync cached, walked, forced or absent, against a bare
// `ssh -o ControlPath=… host true` floor measured in the same run, call by
// call interleaved so the machine's drift hits every row alike. Also: first
// sync vs. an unchanged one, and what the host's ~/.bashrc costs per call.
//
// Starts two sshds of its own with scripts/test-env/sshd.sh (root, Debian):
//   npm run build && node bench/ssh.mjs
// Not a test: nothing here fails.

import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { normalizeSshConfig } from "../dist/backends/ssh/config.js";
import { SshTransport } from "../dist/backends/ssh/transport.js";
import { Session } from "../dist/core/session.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 40);
const TREE_FILES = Number(process.env.BENCH_TREE_FILES ?? 300);
const run = promisify(execFile);

const env = process.env;

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
    cwd: "~",
    timeoutMs: 60_000,
    maxOutputBytes: 50_000,
    outputHeadFraction: 0.4,
    killGraceMs: 1000,
    initTimeoutMs: 30_000,
    warn,
  });
  return { session, transport };
}

/** The floor: a bare ssh client through a master of its own, `true` on the host. */
function bareSsh(config, controlPath) {
  const args = [
    "-o",
    `ControlPath=${controlPath}`,
    "-o",
    "ControlMaster=auto",
    "-o",
    "ControlPersist=120",
    "-o",
    "BatchMode=yes",
    "-o",
    `UserKnownHostsFile=${config.knownHostsFile}`,
    "-i",
    config.keyPath,
    "-p",
    String(config.port),
    "-l",
    config.user,
    "-T",
    config.host,
    "true",
  ];
  return () =>
    new Promise((resolve) => {
      const child = spawn("ssh", args, { stdio: ["ignore", "ignore", "ignore"] });
      child.on("close", resolve);
    });
}

async function privateServer(readBashrc) {
  const dir = join(await mkdtemp(join(os.tmpdir(), "sw-bench-sshd-")), "server");
  const { stdout } = await run("bash", ["scripts/test-env/sshd.sh", "start"], {
    env: { ...env, SHELLWRIGHT_SSHD_DIR: dir, SHELLWRIGHT_SSHD_READ_BASHRC: readBashrc ? "1" : "0" },
  });
  const vars = Object.fromEntries([...stdout.matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1], m[2]]));
  return {
    vars,
    stop: () => run("bash", ["scripts/test-env/sshd.sh", "stop"], { env: { ...env, SHELLWRIGHT_SSHD_DIR: dir } }),
  };
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

  // Two servers of the bench's own: a stock one, where every `ssh host cmd`
  // reads ~/.bashrc (Debian's bash does), and one whose sessions start with
  // SHLVL=1, which makes bash skip it.
  const servers = [
    { name: "stock server (~/.bashrc read by every command)", server: await privateServer(true) },
    { name: "server that skips ~/.bashrc (SetEnv SHLVL=1)", server: await privateServer(false) },
  ];
  const tables = [];
  for (const [index, { name, server }] of servers.entries()) {
    const config = serverConfig(server.vars);
    const root = `${remote}-${index}`;
    const sessions = {
      plain: await open(config),
      cached: await open({ ...config, sync: sync({}, root) }),
      walked: await open({ ...config, sync: sync({ intervalMs: 0 }, root) }),
      forced: await open({ ...config, sync: sync({ force: true }, root) }),
    };
    const floor = bareSsh(config, join(work, `floor-${index}.sock`));
    const rows = { floor: [], plain: [], cached: [], walked: [], forced: [] };
    for (let i = 0; i < 5; i++) {
      await floor();
      for (const s of Object.values(sessions)) await s.session.execute("true");
    }
    for (let i = 0; i < CALLS; i++) {
      rows.floor.push(await time(floor));
      for (const key of ["plain", "cached", "walked", "forced"])
        rows[key].push(await time(() => sessions[key].session.execute("true")));
    }
    for (const s of Object.values(sessions)) await s.session.close();
    await rm(root, { recursive: true, force: true });
    tables.push({ name, rows, config, server });
  }

  // The sync step alone, on a fresh session (rc-skipping server): the first
  // sync, then unchanged and forced ones.
  const fresh = await open({ ...tables[1].config, sync: sync({ intervalMs: 0 }, `${remote}-fresh`) });
  const syncer = fresh.transport.fileSync;
  const firstSync = await time(() => syncer.sync());
  const unchanged = [];
  const forcedSync = [];
  for (let i = 0; i < 20; i++) {
    unchanged.push(await time(() => syncer.sync()));
    forcedSync.push(await time(() => syncer.sync({ force: true })));
  }
  await fresh.session.close();
  for (const { server } of tables) await server.stop();
  await rm(`${remote}-fresh`, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });

  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  console.log(
    `# SSH backend benchmark\n\n${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} × ${cpu}, Node ${process.version}, OpenSSH on 127.0.0.1.`,
  );
  console.log(`Sync set: 3 credential files + a directory of ${TREE_FILES} files in 30 subdirectories.`);
  const line = (name, s, base) => console.log(`| ${name} | ${ms(s.p50)} | ${ms(s.p95)} | ${ratio(s.p50, base.p50)} |`);
  for (const { name, rows } of tables) {
    const f = summary(rows.floor);
    console.log(`\n## Per-command latency, \`execute("true")\`, ${name} (${CALLS} calls per row, interleaved)\n`);
    console.log("| row | p50 | p95 | p50 vs floor |");
    console.log("|---|---|---|---|");
    line("(c) floor: bare `ssh -o ControlPath=… host true`", f, f);
    line("no sync configured", summary(rows.plain), f);
    line("(a) sync configured, unchanged (default 5 s interval)", summary(rows.cached), f);
    line("(a') sync configured, unchanged, interval 0 (tree walked every call)", summary(rows.walked), f);
    line("(b) sync forced every call", summary(rows.forced), f);
    console.log(`\nForced vs cached, (b)/(a) at p50: ${ratio(summary(rows.forced).p50, summary(rows.cached).p50)}.`);
  }
  console.log(
    `\n~/.bashrc cost per command (floor with it − floor without it, p50): ${ms(summary(tables[0].rows.floor).p50 - summary(tables[1].rows.floor).p50)}.`,
  );
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
