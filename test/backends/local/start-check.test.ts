/**
 * Servers check what they were given before they say they are ready
 * (src/backends/local/start-check.ts, run by `shellwright mcp`, `serve` and
 * startGateway): a cwd that cannot be entered, a root that does not exist, a
 * sandbox without bubblewrap. Each is refused by the real CLI with one line
 * and exit 2, so an MCP host shows "Failed to connect" instead of
 * "Connected" and a first tool call that fails.
 */

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, describe, expect, it } from "vitest";
import { startGateway } from "../../../src/index.js";
import { bin, cliHome } from "../../helpers/cli.js";

const home = cliHome();
afterAll(() => home.remove());
const scratch = mkdtempSync(join(tmpdir(), "sw-start-check-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
/** A PATH where bubblewrap is not (node is run by its absolute path). */
const noBwrap = { ...home.env, PATH: join(scratch, "empty-path") };

function cli(args: string[], env: NodeJS.ProcessEnv = home.env) {
  const run = spawnSync(process.execPath, [bin, ...args], {
    env,
    encoding: "utf8",
    stdio: ["pipe", "pipe", "pipe"],
    input: "",
    timeout: 60_000,
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

const file = join(scratch, "not-a-dir");
writeFileSync(file, "");
const config = join(scratch, "config.json");
writeFileSync(config, JSON.stringify({ cwd: "/nonexistent/from-file" }));

const refusals: [string, string[], NodeJS.ProcessEnv | undefined, string][] = [
  [
    "mcp --cwd on a path that does not exist (the README's placeholder, pasted)",
    ["mcp", "--cwd", "/path/to/project"],
    undefined,
    'shellwright: --cwd: cwd "/path/to/project" does not exist on this machine; give a directory that exists\n',
  ],
  [
    "mcp --http --cwd on a file",
    ["mcp", "--http", "--port", "0", "--insecure-no-auth", "--cwd", file],
    undefined,
    `shellwright: --cwd: cwd ${JSON.stringify(file)} is not a directory on this machine; give a directory that exists\n`,
  ],
  [
    "mcp with a config file's cwd that does not exist",
    ["mcp", "-c", config],
    undefined,
    `shellwright: ${config}: cwd "/nonexistent/from-file" does not exist on this machine; give a directory that exists\n`,
  ],
  [
    "mcp --sandbox without bubblewrap",
    ["mcp", "--sandbox"],
    noBwrap,
    "shellwright: --sandbox: The local sandbox needs bubblewrap (bwrap), which is not on PATH: install bubblewrap",
  ],
  [
    "serve --cwd on a path that does not exist",
    ["serve", "--insecure-no-auth", "--port", "0", "--cwd", "/nonexistent/work"],
    undefined,
    'shellwright serve: --cwd: cwd "/nonexistent/work" does not exist on this machine; give a directory that exists\n',
  ],
  [
    "serve --allow-root on a path that does not exist",
    ["serve", "--insecure-no-auth", "--port", "0", "--allow-root", "/srv/nonexistent"],
    undefined,
    'shellwright serve: --allow-root: allowedRoots "/srv/nonexistent" does not exist on this machine; give a directory that exists\n',
  ],
  [
    "serve --sandbox without bubblewrap",
    ["serve", "--insecure-no-auth", "--port", "0", "--sandbox"],
    noBwrap,
    "shellwright serve: --sandbox: The local sandbox needs bubblewrap (bwrap), which is not on PATH",
  ],
];

describe("servers refuse at start what every later call would fail on", () => {
  for (const [what, args, env, message] of refusals) {
    it(`${what}: one line, exit 2, nothing on stdout`, () => {
      const run = cli(args, env);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr.split("\n").filter(Boolean)).toHaveLength(1);
      expect(run.stderr.startsWith(message)).toBe(true);
    });
  }

  it('an MCP client sees "Failed to connect": the handshake never completes', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, "mcp", "--cwd", "/path/to/project"],
      env: home.env as Record<string, string>,
      stderr: "pipe",
    });
    const client = new Client({ name: "shellwright-test", version: "0.0.0" });
    await expect(client.connect(transport)).rejects.toThrow();
    await client.close().catch(() => undefined);
  });

  it("startGateway refuses the same before it listens", async () => {
    await expect(
      startGateway({ insecureNoAuth: true, port: 0, allowedRoots: ["/srv/nonexistent"], log: () => undefined }),
    ).rejects.toMatchObject({ name: "InvalidOptionError", option: "allowedRoots" });
  });

  it("still starts on a cwd that exists", () => {
    const run = spawnSync(process.execPath, [bin, "mcp", "--cwd", scratch], {
      env: home.env,
      encoding: "utf8",
      input: "",
      timeout: 60_000,
    });
    // stdin ends at once: the server started, saw its client go, and exited 0.
    expect(run.status, run.stderr).toBe(0);
  });
});
