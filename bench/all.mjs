#!/usr/bin/env node
// `npm run bench`: every benchmark, one after another (they would disturb each
// other's floors if run at once). Each prints ratios against a floor measured
// in its own run. Set BENCH=name,name to run a subset.
import { spawnSync } from "node:child_process";

const benches = [
  { name: "session", file: "bench/run.mjs" },
  { name: "process-poll", file: "bench/process-poll.mjs" },
  { name: "pty-echo", file: "bench/pty-echo.mjs" },
  // A flood through a PTY with a pattern wait pending, beside tmux or script (each where the backend has it).
  { name: "pty-flood", file: "bench/pty-flood.mjs" },
  // Local and the gateway always; ssh and docker when their test environment is set (it says which ran).
  { name: "pty-close", file: "bench/pty-close.mjs" },
  { name: "file-tools", file: "bench/file-tools.mjs" },
  { name: "redaction", file: "bench/redaction.mjs" },
  { name: "gateway", file: "bench/gateway.mjs" },
  // commands.run("true") through the e2b SDK against serve --api e2b, beside the gateway backend and bash -c true.
  { name: "e2b", file: "bench/e2b.mjs" },
  { name: "mcp", file: "bench/mcp.mjs" },
  { name: "fast-path", file: "bench/fast-path.mjs" },
  { name: "command-mix", file: "bench/command-mix.mjs" },
  { name: "cli-startup", file: "bench/cli-startup.mjs" },
  { name: "import", file: "bench/import.mjs" },
  { name: "state-dir", file: "bench/state-dir.mjs" },
  // Checkpoint and rollback of a 200 MB local workspace (docs/branching.md).
  { name: "checkpoint", file: "bench/checkpoint.mjs" },
  // The same in the local sandbox, where the workspace is overlay layers (needs root and bwrap).
  {
    name: "checkpoint-sandbox",
    file: "bench/checkpoint-sandbox.mjs",
    needs: () => process.getuid?.() === 0 && spawnSync("bwrap", ["--version"]).status === 0,
  },
  // The same on docker, beside `docker commit`, and fork of 16 (needs the engine and the test image).
  {
    name: "checkpoint-docker",
    file: "bench/checkpoint-docker.mjs",
    needs: () => process.env.SHELLWRIGHT_TEST_DOCKER === "1",
  },
  { name: "login-snapshot", file: "bench/login-snapshot.mjs" },
  // Needs bubblewrap; says so and exits 0 without it.
  { name: "sandbox", file: "bench/sandbox.mjs" },
  { name: "ssh", file: "bench/ssh.mjs" },
  // Needs a Docker Engine and the test image (scripts/test-env/docker.sh).
  { name: "docker", file: "bench/docker.mjs", needs: () => process.env.SHELLWRIGHT_TEST_DOCKER === "1" },
  // Local always; its docker part only with SHELLWRIGHT_TEST_DOCKER=1 (it says so otherwise).
  { name: "pool", file: "bench/pool.mjs" },
];
const wanted = process.env.BENCH?.split(",");
let failed = 0;
for (const bench of benches) {
  if (wanted && !wanted.includes(bench.name)) continue;
  if (bench.needs && !bench.needs()) {
    console.log(`\n===== ${bench.name}: skipped (set SHELLWRIGHT_TEST_DOCKER=1 with a running engine) =====`);
    continue;
  }
  console.log(`\n===== ${bench.name} (${bench.file}) =====`);
  const result = spawnSync(process.execPath, [bench.file], { stdio: "inherit" });
  if (result.status !== 0) {
    failed++;
    console.log(`(${bench.name} exited ${result.status})`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;
