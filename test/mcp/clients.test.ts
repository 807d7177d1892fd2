/**
 * Real MCP clients against `shellwright mcp` over stdio, listing and calling
 * tools as they would for a model (no model needed): the OpenAI Agents SDK with
 * strict schemas (it sends null for every optional argument), the MCP
 * Inspector's CLI mode, and LangChain's MCP adapters.
 */

import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const CLI = resolve(ROOT, "dist/cli/main.js");
const SERVER_ARGS = [CLI, "mcp", "--backend", "local", "--cwd", "/tmp"];

describe("MCP clients over stdio", { timeout: 120_000 }, () => {
  it("the OpenAI Agents SDK with convertSchemasToStrict: strict tools, nulls for what the model leaves out", async () => {
    const { MCPServerStdio, getAllMcpTools, RunContext } = await import("@openai/agents");
    const server = new MCPServerStdio({ command: process.execPath, args: SERVER_ARGS, cacheToolsList: false });
    await server.connect();
    try {
      const tools = await getAllMcpTools({ mcpServers: [server], convertSchemasToStrict: true });
      const terminal = tools.find((tool) => tool.name === "terminal");
      if (terminal?.type !== "function") throw new Error("no terminal function tool");
      // The SDK falls back to non-strict when it cannot convert a schema; ours converts.
      expect(terminal.strict).toBe(true);
      expect(terminal.parameters.required).toEqual([
        "command",
        "background",
        "timeout",
        "workdir",
        "pty",
        "cols",
        "rows",
        "notify_on_complete",
      ]);
      const args = {
        command: "echo from-agents",
        background: null,
        timeout: null,
        workdir: null,
        pty: null,
        cols: null,
        rows: null,
        notify_on_complete: null,
      };
      const output = await terminal.invoke(new RunContext(), JSON.stringify(args));
      expect(JSON.stringify(output)).toContain("from-agents");
      expect(JSON.stringify(output)).not.toContain("expected boolean");
      const process = tools.find((tool) => tool.name === "process");
      if (process?.type !== "function") throw new Error("no process function tool");
      const listed = await process.invoke(
        new RunContext(),
        JSON.stringify({
          action: "list",
          session_id: null,
          data: null,
          keys: null,
          pattern: null,
          cols: null,
          rows: null,
          timeout: null,
          offset: null,
          limit: null,
        }),
      );
      expect(JSON.stringify(listed)).toContain("processes");
    } finally {
      await server.close();
    }
  });

  it("the MCP Inspector CLI: tools/list and tools/call", async () => {
    const inspector = resolve(ROOT, "node_modules/@modelcontextprotocol/inspector/cli/build/cli.js");
    const inspect = async (...method: string[]): Promise<unknown> => {
      const { stdout } = await run(
        process.execPath,
        [inspector, "--cli", process.execPath, ...SERVER_ARGS, ...method],
        {
          cwd: ROOT,
          timeout: 100_000,
        },
      );
      return JSON.parse(stdout);
    };
    const listing = (await inspect("--method", "tools/list")) as { tools: { name: string }[] };
    expect(listing.tools.map((tool) => tool.name)).toContain("terminal");
    const called = await inspect(
      "--method",
      "tools/call",
      "--tool-name",
      "terminal",
      "--tool-arg",
      "command=echo from-inspector",
    );
    expect(JSON.stringify(called)).toContain("from-inspector");
  });

  it("LangChain's MultiServerMCPClient: get the tools, invoke one", async () => {
    const { MultiServerMCPClient } = await import("@langchain/mcp-adapters");
    const client = new MultiServerMCPClient({
      mcpServers: { shellwright: { transport: "stdio", command: process.execPath, args: SERVER_ARGS } },
    });
    try {
      const tools = await client.getTools();
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["terminal", "read_file"]));
      const terminal = tools.find((tool) => tool.name === "terminal")!;
      const result: unknown = await terminal.invoke({ command: "echo from-langchain" });
      expect(JSON.stringify(result)).toContain("from-langchain");
    } finally {
      await client.close();
    }
  });
});
