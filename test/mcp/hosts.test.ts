/**
 * `shellwright mcp` configured in real MCP host apps with their own commands,
 * as their users do (docs/agents.md): Gemini CLI's `gemini mcp add/list`,
 * Claude Code's `claude mcp add/list`, Codex's `codex mcp add/get`. Gemini
 * and Claude connect in `mcp list` (initialize, no model, no login); Codex
 * only stores the server, so its stored command is then connected with the
 * official MCP SDK client. Each host runs in a scratch HOME, so no real
 * configuration is read or written. The hosts come from
 * scripts/test-env/mcp-hosts.sh ($SHELLWRIGHT_TEST_MCP_HOSTS) or PATH; a
 * missing one is skipped with the reason.
 */

import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const bin = join(import.meta.dirname, "../../dist/cli/main.js");
/** What the user's snippet runs (`npx shellwright mcp …`), here from the built tree. */
const server = [process.execPath, bin, "mcp", "--cwd", tmpdir()];

function hostBinary(name: string): string | undefined {
  const dir = process.env.SHELLWRIGHT_TEST_MCP_HOSTS;
  if (dir !== undefined && existsSync(join(dir, name))) return join(dir, name);
  const found = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

const why = (name: string): string =>
  `${name} is not installed (eval "$(bash scripts/test-env/mcp-hosts.sh)" installs the MCP hosts)`;

let home: string;
let project: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "sw-mcp-host-"));
  project = join(home, "project");
  mkdirSync(project);
  mkdirSync(join(home, ".codex"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

async function host(binary: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const { stdout, stderr } = await run(binary, args, {
    cwd: project,
    env: { ...process.env, HOME: home, CODEX_HOME: join(home, ".codex"), NO_COLOR: "1", ...env },
    timeout: 120_000,
  });
  return `${stdout}${stderr}`;
}

describe("MCP host apps", { timeout: 300_000 }, () => {
  it("Gemini CLI: gemini mcp add, then gemini mcp list connects", async (context) => {
    const gemini = hostBinary("gemini");
    if (gemini === undefined) return context.skip(why("gemini"));
    expect(await host(gemini, ["mcp", "add", "shellwright", ...server])).toContain('MCP server "shellwright" added');
    // A folder the user has not trusted keeps its servers off; trusting it is the user's step.
    const listed = await host(gemini, ["mcp", "list"], { GEMINI_CLI_TRUST_WORKSPACE: "true" });
    expect(listed).toMatch(/✓ shellwright: .*main\.js mcp --cwd \S+ \(stdio\) - Connected/);
  });

  it("Claude Code: claude mcp add, then claude mcp list connects", async (context) => {
    const claude = hostBinary("claude");
    if (claude === undefined) return context.skip(why("claude"));
    expect(await host(claude, ["mcp", "add", "shellwright", "--", ...server])).toContain(
      "Added stdio MCP server shellwright",
    );
    expect(await host(claude, ["mcp", "list"])).toMatch(/shellwright: .*main\.js mcp --cwd \S+ - ✔ Connected/);
  });

  it("Codex: codex mcp add stores the server, and the stored command serves the tools", async (context) => {
    const codex = hostBinary("codex");
    if (codex === undefined) return context.skip(why("codex"));
    expect(await host(codex, ["mcp", "add", "shellwright", "--", ...server])).toContain(
      "Added global MCP server 'shellwright'",
    );
    const stored = JSON.parse(await host(codex, ["mcp", "get", "shellwright", "--json"]).then(jsonPart)) as {
      enabled: boolean;
      transport: { type: string; command: string; args: string[] };
    };
    expect(stored).toMatchObject({
      enabled: true,
      transport: { type: "stdio", command: server[0], args: server.slice(1) },
    });
    // Codex connects only when a model runs; the SDK client connects to what it stored instead.
    const client = new Client({ name: "codex-config-check", version: "1" });
    await client.connect(new StdioClientTransport({ command: stored.transport.command, args: stored.transport.args }));
    try {
      expect((await client.listTools()).tools).toHaveLength(7);
    } finally {
      await client.close();
    }
  });
});

/** Codex prints a warning line before the JSON when CODEX_HOME is under /tmp. */
function jsonPart(text: string): string {
  return text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1);
}
