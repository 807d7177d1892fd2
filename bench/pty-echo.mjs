#!/usr/bin/env node
// Keystroke to echo through the tools, on a pseudo-terminal process: `cat`
// under terminal(pty=true, background=true), then, call after call,
// process(submit) of a fresh word and process(wait, pattern) for the
// terminal's echo of it. Beside it, the floor: one foreground call
// (`true`) on the same session, interleaved, so drift hits both alike; each
// backend with its fast path and without (`-plain`). On the fast path a keystroke is one frame to the session's
// helper and the echo one frame back (native/procs.c); on the plain path each is a command in the backend.
//
//   npm run build && node bench/pty-echo.mjs
// Backends: local and the gateway (in this process, over loopback HTTP, local
// behind it) always; ssh with SHELLWRIGHT_TEST_SSH* set and docker with
// SHELLWRIGHT_TEST_DOCKER=1 (scripts/test-env/). Modal and Daytona run here
// only as the tests' stand-ins, whose timings say nothing of the clouds.
// Not a test: nothing here fails.

import { randomBytes } from "node:crypto";
import { createEnvironment, startGateway } from "../dist/index.js";
import { callTool } from "../dist/tools/registry.js";
import { sshBenchConfig, dockerBenchConfig } from "./test-env.mjs";

const CALLS = Number(process.env.BENCH_CALLS ?? 60);
const env = process.env;

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const ms = (x) => `${x.toFixed(1)} ms`;

const token = randomBytes(24).toString("hex");
const gateway = await startGateway({ token, port: 0, allowedRoots: ["/"], cwd: "/tmp", log: () => undefined });
// Each backend with the fast path (the default) and without it (`-plain`: every keystroke, echo and floor call
// its own bash); BENCH_PTY_BACKENDS=local,docker narrows the list.
const backends = [
  { name: "local", config: { backend: "local" } },
  { name: "local-plain", config: { backend: "local", fastPath: false } },
  { name: "gateway", config: { backend: "gateway", url: gateway.url, token } },
];
const ssh = sshBenchConfig(env);
if (ssh) backends.push({ name: "ssh", config: { ...ssh } }, { name: "ssh-plain", config: { ...ssh, fastPath: false } });
const docker = dockerBenchConfig(env);
if (docker)
  backends.push({ name: "docker", config: docker }, { name: "docker-plain", config: { ...docker, fastPath: false } });
const only = env.BENCH_PTY_BACKENDS?.split(",");

for (const { name, config } of backends.filter((b) => only === undefined || only.includes(b.name))) {
  const session = await createEnvironment(config);
  try {
    // The PTY is started once the helper is ready, so that on the fast path it is the helper's to attach to (a
    // docker PTY started before takes the follower and the execute route, as the plain path does).
    await session.whenFastPathReady?.();
    const call = (tool, args) => callTool(tool, args, { session });
    const started = await call("terminal", { command: "cat", background: true, pty: true });
    const id = started.session_id;
    if (!id) throw new Error(`${name}: ${JSON.stringify(started)}`);
    const echo = [];
    const plain = [];
    for (let i = 0; i < CALLS + 5; i++) {
      const word = `w${i}x${Math.random().toString(36).slice(2, 8)}`;
      let t = performance.now();
      await call("process", { action: "submit", session_id: id, data: word });
      const seen = await call("process", { action: "wait", session_id: id, pattern: word, timeout: 30 });
      const e = performance.now() - t;
      if (seen.status !== "matched") throw new Error(`${name}: ${JSON.stringify(seen)}`);
      t = performance.now();
      await session.execute("true");
      const p = performance.now() - t;
      // The first calls warm up the follower and the connection.
      if (i >= 5) {
        echo.push(e);
        plain.push(p);
      }
    }
    await call("process", { action: "kill", session_id: id });
    echo.sort((a, b) => a - b);
    plain.sort((a, b) => a - b);
    // The floor: the same session's foreground `true`, measured between the keystrokes.
    console.log(
      `${name.padEnd(12)} keystroke→echo p50 ${ms(pct(echo, 0.5))} p95 ${ms(pct(echo, 0.95))} | floor (execute "true") p50 ${ms(pct(plain, 0.5))} p95 ${ms(pct(plain, 0.95))} | echo/floor p50 ${(pct(echo, 0.5) / pct(plain, 0.5)).toFixed(2)}x (${CALLS} calls)`,
    );
  } finally {
    await session.close();
  }
}
await gateway.close();
