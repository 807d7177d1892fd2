#!/usr/bin/env node
// A flood of output through a pseudo-terminal while a `process wait` with a
// pattern is pending for its end marker: `cat` of a file of base64 lines
// under terminal(pty=true, background=true), then process(wait, pattern=<the
// marker>) at once. Measured: the time from the start to the matched wait (and
// MB/s), the owner's longest event-loop stall while it runs (perf_hooks'
// monitorEventLoopDelay), and the owner's RSS growth (sampled peak).
// Beside it, on the same backend and the same file: the same flood with no
// wait pending (until the marker is on the screen), and the floor: `tmux`
// (a terminal emulator: it parses every byte into its screen) when the backend
// has it, and `script` (a PTY whose output goes to /dev/null) when it has that.
//
//   npm run build && node bench/pty-flood.mjs
// BENCH_FLOOD_MB (default 50) sets the size. Backends: local always; ssh with
// SHELLWRIGHT_TEST_SSH* set and docker with SHELLWRIGHT_TEST_DOCKER=1
// (scripts/test-env/); BENCH_ONLY=local,docker narrows them.
// Not a test: nothing here fails.

import { randomBytes } from "node:crypto";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createEnvironment } from "../dist/index.js";
import { callTool } from "../dist/tools/registry.js";
import { sshBenchConfig, dockerBenchConfig } from "./test-env.mjs";

const MB = Number(process.env.BENCH_FLOOD_MB ?? 50);
const env = process.env;

const backends = [{ name: "local", config: { backend: "local" } }];
const ssh = sshBenchConfig(env);
if (ssh) backends.push({ name: "ssh", config: { ...ssh } });
const docker = dockerBenchConfig(env);
if (docker) backends.push({ name: "docker", config: docker });
const only = env.BENCH_ONLY?.split(",");

/** Runs `work` and reports its time, the longest event-loop stall meanwhile, and the peak RSS growth. */
async function measured(work) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  const rss0 = process.memoryUsage.rss();
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 50);
  delay.enable();
  const started = performance.now();
  try {
    const detail = await work();
    return {
      seconds: (performance.now() - started) / 1000,
      stallMs: delay.max / 1e6,
      rssMB: (peak - rss0) / 1e6,
      detail,
    };
  } finally {
    delay.disable();
    clearInterval(sampler);
  }
}

const line = (what, r) =>
  `  ${what.padEnd(34)} ${r.seconds.toFixed(2).padStart(6)} s  ${(MB / r.seconds).toFixed(1).padStart(5)} MB/s` +
  (r.stallMs === undefined
    ? ""
    : `  loop stall max ${r.stallMs.toFixed(0).padStart(4)} ms  RSS +${r.rssMB.toFixed(0)} MB`);

for (const { name, config } of backends) {
  if (only && !only.includes(name)) continue;
  const session = await createEnvironment(config);
  const call = (tool, args) => callTool(tool, args, { session });
  try {
    const dir = (await session.execute("mktemp -d")).output.trim();
    const file = `${dir}/flood.txt`;
    // Base64 lines of 76 characters: ordinary text a terminal scrolls through.
    const made = await session.execute(
      `head -c ${Math.round((MB * 1e6 * 3) / 4)} /dev/urandom | base64 > ${file} && wc -c < ${file}`,
      { timeoutMs: 120_000 },
    );
    if (made.exitCode !== 0) throw new Error(`${name}: ${made.output}`);
    console.log(`${name}: ${(Number(made.output.trim()) / 1e6).toFixed(1)} MB of base64 lines through a PTY`);
    const marker = () => `FLOOD-END-${randomBytes(4).toString("hex")}`;

    const withWait = await measured(async () => {
      const end = marker();
      const started = await call("terminal", { command: `cat ${file}; echo ${end}`, background: true, pty: true });
      const seen = await call("process", {
        action: "wait",
        session_id: started.session_id,
        pattern: end,
        timeout: 600,
      });
      if (seen.status !== "matched") throw new Error(`${name}: ${JSON.stringify(seen).slice(0, 500)}`);
      await call("process", { action: "kill", session_id: started.session_id });
    });
    console.log(line("shellwright, wait pending", withWait));

    const noWait = await measured(async () => {
      const end = marker();
      const started = await call("terminal", { command: `cat ${file}; echo ${end}`, background: true, pty: true });
      await call("process", { action: "wait", session_id: started.session_id, timeout: 600 });
      for (;;) {
        const shot = await call("process", { action: "screen", session_id: started.session_id });
        if (String(shot.screen).includes(end)) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    console.log(line("shellwright, no wait (to screen)", noWait));

    const tools = (await session.execute("command -v tmux; command -v script; true")).output;
    let floor;
    if (tools.includes("tmux")) {
      const socket = `sw-flood-${process.pid}`;
      const tmux = await measured(async () => {
        const r = await session.execute(
          `tmux -L ${socket} -f /dev/null new-session -d -x 80 -y 24 "cat ${file}; echo END; tmux -L ${socket} wait-for -S done" && tmux -L ${socket} wait-for done; tmux -L ${socket} kill-server 2>/dev/null; true`,
          { timeoutMs: 600_000 },
        );
        if (r.exitCode !== 0) throw new Error(r.output);
      });
      console.log(line("floor: tmux", { ...tmux, stallMs: undefined }));
      floor = { name: "tmux", seconds: tmux.seconds };
    } else console.log("  floor: tmux                        (not installed in this backend)");
    if (tools.includes("script")) {
      const script = await measured(async () => {
        const r = await session.execute(`script -qfec "cat ${file}" /dev/null > /dev/null`, { timeoutMs: 600_000 });
        if (r.exitCode !== 0) throw new Error(r.output);
      });
      console.log(line("floor: script > /dev/null", { ...script, stallMs: undefined }));
      floor ??= { name: "script", seconds: script.seconds };
    } else console.log("  floor: script                      (not installed in this backend)");
    if (floor !== undefined)
      console.log(
        `  wait pending / ${floor.name}: ${(withWait.seconds / floor.seconds).toFixed(2)}x; no wait / ${floor.name}: ${(noWait.seconds / floor.seconds).toFixed(2)}x`,
      );
    await session.execute(`rm -rf ${dir}`);
  } finally {
    await session.close();
  }
}
