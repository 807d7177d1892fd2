/**
 * The servers' own tokens never reach a session. `shellwright serve` and
 * `shellwright mcp --http` run as real processes (the built dist/) with the
 * token in their environment variable, as a user starts them; a session
 * opened through each looks for it in its variables (the adversary: a model
 * that runs `echo $SHELLWRIGHT_GATEWAY_TOKEN` or `env`) and on disk (the
 * session snapshot).
 */

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment } from "../../src/index.js";
import { eventually } from "../helpers/processes.js";
import { call, fixture } from "../mcp/helpers.js";

const SERVE = join(import.meta.dirname, "../../dist/cli/serve.js");

/** Both servers' variables, each holding a token of its own; a session must see neither. */
function serverEnv(): { env: NodeJS.ProcessEnv; gatewayToken: string; mcpToken: string } {
  const gatewayToken = `gw-${randomBytes(20).toString("hex")}`;
  const mcpToken = `mcp-${randomBytes(20).toString("hex")}`;
  return {
    env: { ...process.env, SHELLWRIGHT_GATEWAY_TOKEN: gatewayToken, SHELLWRIGHT_MCP_TOKEN: mcpToken },
    gatewayToken,
    mcpToken,
  };
}

/** Files under the local backend's state roots that contain `needle` (each token is unique to one test). */
function filesHolding(needle: string): string[] {
  const roots = [process.env.XDG_RUNTIME_DIR, "/dev/shm", tmpdir()].filter((dir): dir is string => !!dir);
  const hits: string[] = [];
  const walk = (dir: string, depth: number): void => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      try {
        const stat = statSync(path);
        if (stat.isDirectory() && depth < 2) walk(path, depth + 1);
        else if (stat.isFile() && stat.size < 1_000_000 && readFileSync(path).includes(needle)) hits.push(path);
      } catch {
        // gone meanwhile, or not ours to read
      }
    }
  };
  for (const root of new Set(roots)) {
    for (const name of existsSync(root) ? readdirSync(root) : []) {
      if (name.startsWith("shellwright-")) walk(join(root, name), 0);
    }
  }
  return hits;
}

/** A value the session does keep, to show the file search finds a snapshot when there is something to find. */
const KEPT = `kept-${randomBytes(12).toString("hex")}`;
const PROBE = 'echo "gw=${SHELLWRIGHT_GATEWAY_TOKEN-unset} mcp=${SHELLWRIGHT_MCP_TOKEN-unset}"; env';

/** The session's own mark is in a file the session keeps; neither token is in any. */
function expectOnDiskOnlyKept(gatewayToken: string, mcpToken: string): void {
  expect(filesHolding(KEPT)).not.toEqual([]);
  expect(filesHolding(gatewayToken)).toEqual([]);
  expect(filesHolding(mcpToken)).toEqual([]);
}

describe("a server's token never reaches its sessions", () => {
  const children: ChildProcess[] = [];
  beforeAll(() => {
    if (!existsSync(SERVE)) throw new Error(`${SERVE} is missing: run \`npm run build\` first`);
  });
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  });

  it("shellwright serve: not in the session's variables, not in `env`, not in the snapshot", async () => {
    const { env: childEnv, gatewayToken, mcpToken } = serverEnv();
    const child = spawn(process.execPath, [SERVE, "--port", "0"], {
      env: childEnv,
      stdio: ["ignore", "pipe", "ignore"],
    });
    children.push(child);
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("\n")) resolve(out.trim());
      });
      child.once("exit", (code) => reject(new Error(`serve exited with ${code} before listening`)));
    });
    const session = await createEnvironment({ backend: "gateway", url, token: gatewayToken });
    try {
      await session.execute(`export MARK=${KEPT}`);
      const result = await session.execute(PROBE);
      expect(result.exitCode).toBe(0);
      expect(result.output).toContain("gw=unset mcp=unset");
      expect(result.output).toContain(`MARK=${KEPT}`); // `env` ran and listed the session's own variables
      expect(result.output).not.toContain(gatewayToken);
      expect(result.output).not.toContain(mcpToken);
      expect(readFileSync(session.paths.snapshot, "utf8")).toContain(KEPT);
      expectOnDiskOnlyKept(gatewayToken, mcpToken);
    } finally {
      await session.close();
      child.kill("SIGTERM");
    }
  });

  it("shellwright mcp --http: not in the session's variables, not in `env`, not in the snapshot", async () => {
    const { env: childEnv, gatewayToken, mcpToken } = serverEnv();
    const child = spawn(process.execPath, [fixture("run-mcp-cli.mjs"), "--http", "--port", "0"], {
      env: childEnv,
      stdio: ["ignore", "ignore", "pipe"],
    });
    children.push(child);
    let stderr = "";
    child.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
    await eventually(() => /MCP server on (\S+)/.test(stderr), "the server to say its address");
    const url = /MCP server on (\S+)/.exec(stderr)![1]!;
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${mcpToken}` } },
    });
    const client = new Client({ name: "credentials-test", version: "0" });
    await client.connect(transport);
    try {
      await call(client, "terminal", { command: `export MARK=${KEPT}` });
      const result = await call(client, "terminal", { command: PROBE });
      const output = (result.structuredContent as { output: string }).output;
      expect(output).toContain("gw=unset mcp=unset");
      expect(output).toContain(`MARK=${KEPT}`);
      expect(output).not.toContain(gatewayToken);
      expect(output).not.toContain(mcpToken);
      expectOnDiskOnlyKept(gatewayToken, mcpToken);
    } finally {
      await client.close();
      child.kill("SIGTERM");
    }
  });
});
