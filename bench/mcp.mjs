#!/usr/bin/env node
// What the MCP door costs: one `terminal` call through the MCP SDK's client and
// the stdio server, against the same command run directly on a session, and
// against handleToolCall (the tool layer without MCP, with and without the
// terminal's check for a program waiting on a terminal). Calls are interleaved so
// the machine's drift hits every side alike. Run after `npm run build`:
//   node bench/mcp.mjs            (BENCH_CALLS=200 by default)
// Not a test: nothing here fails.

import os from "node:os";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createEnvironment, handleToolCall } from "../dist/index.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const summary = (times) => {
  const s = [...times].sort((a, b) => a - b);
  return { p50: pct(s, 0.5), p95: pct(s, 0.95) };
};
const ms = (x) => `${x.toFixed(2)} ms`;

const env = await createEnvironment({ backend: "local" });
const transport = new StdioClientTransport({
  command: process.execPath,
  // `shellwright mcp --backend local`, through the command's own main().
  args: [
    "--input-type=module",
    "-e",
    `import { main } from ${JSON.stringify(new URL("../dist/cli/mcp.js", import.meta.url).href)}; process.exitCode = await main(["--backend", "local"]);`,
  ],
  stderr: "inherit",
});
const client = new Client({ name: "bench", version: "0" });
await client.connect(transport);

const command = "echo hello";
const sides = {
  "session.execute (floor)": () => env.execute(command),
  // The terminal tool without its check for a program waiting on a terminal (the command's `echo` of its mark).
  "handleToolCall, stuckInputMs 0": () =>
    handleToolCall(env, "terminal", { command }, { settings: { stuckInputMs: 0 } }),
  handleToolCall: () => handleToolCall(env, "terminal", { command }),
  "MCP stdio callTool": () => client.callTool({ name: "terminal", arguments: { command } }),
};
const times = Object.fromEntries(Object.keys(sides).map((name) => [name, []]));
for (let i = 0; i < 10; i++) for (const run of Object.values(sides)) await run(); // warm up (opens the server's session)
for (let i = 0; i < CALLS; i++) {
  for (const [name, run] of Object.entries(sides)) {
    const started = performance.now();
    await run();
    times[name].push(performance.now() - started);
  }
}
await client.close();
await env.close();

const floor = summary(times["session.execute (floor)"]).p50;
console.log(`# MCP door overhead, ${CALLS} interleaved calls of \`${command}\``);
console.log(
  `# ${new Date().toISOString()}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? "cpu"}, node ${process.version}`,
);
console.log("| path | p50 | p95 | p50 vs floor |");
console.log("| --- | --- | --- | --- |");
for (const [name, list] of Object.entries(times)) {
  const { p50, p95 } = summary(list);
  console.log(`| ${name} | ${ms(p50)} | ${ms(p95)} | ${(p50 / floor).toFixed(2)}x (+${ms(p50 - floor)}) |`);
}
