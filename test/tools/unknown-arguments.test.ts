/**
 * Every tool refuses an argument it does not take, with one message naming the
 * key, the tool and the keys it takes; an ignored `dry_run` would run the
 * call for real. The MCP listing says so too (additionalProperties: false), so
 * a client that validates before sending refuses it first.
 */

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { createEnvironment, type Environment } from "../../src/index.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { callTool, TOOLS } from "../../src/tools/registry.js";
import { useSession } from "../helpers/session.js";

/** One call per tool: valid arguments plus one the tool does not take. */
const calls: Record<string, Record<string, unknown>> = {
  terminal: { command: "echo hi", timout: 5 },
  process: { action: "list", sesion_id: "x" },
  read_file: { path: "notes.txt", limt: 3 },
  write_file: { path: "created.txt", content: "x", mode: "append" },
  patch: { path: "notes.txt", old_string: "one", new_string: "two", dry_run: true },
  search_files: { pattern: "one", pth: "/etc" },
  execute_code: { code: "open('ran.txt', 'w').write('x')", timeout: 5 },
};

describe("unknown tool arguments", () => {
  let dir: string;
  let session: Environment;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sw-unknown-args-"));
    writeFileSync(join(dir, "notes.txt"), "one\n");
    session = await createEnvironment({ backend: "local", cwd: dir });
  });
  afterAll(async () => {
    await session?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("covers every tool", () => {
    expect(Object.keys(calls).sort()).toEqual(TOOLS.map((tool) => tool.name).sort());
  });

  for (const tool of TOOLS) {
    it(`${tool.name} refuses an unknown key, naming it and the keys it takes`, async () => {
      const args = calls[tool.name]!;
      const shape = (tool.inputSchema as z.ZodObject).shape;
      const [unknown] = Object.keys(args).filter((key) => !(key in shape));
      const allowed = Object.keys(shape).join(", ");
      expect(await callTool(tool, args, { session })).toEqual({
        error: `Invalid arguments for ${tool.name}: unknown argument "${unknown}" for ${tool.name} (${tool.name} takes: ${allowed}); fix it and call ${tool.name} again.`,
      });
    });
  }

  it("runs nothing when it refuses: patch with dry_run writes nothing, write_file and execute_code create nothing", async () => {
    for (const name of ["patch", "write_file", "execute_code"]) await callTool(name, calls[name], { session });
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("one\n");
    expect(existsSync(join(dir, "created.txt"))).toBe(false);
    expect(existsSync(join(dir, "ran.txt"))).toBe(false);
  });

  it("names every unknown key of one call", async () => {
    const result = await callTool("read_file", { path: "notes.txt", limt: 3, ofset: 2 }, { session });
    expect(result.error).toContain(
      'unknown arguments "limt", "ofset" for read_file (read_file takes: path, offset, limit)',
    );
  });

  it("every MCP input schema is closed: additionalProperties is false", async () => {
    const mcp = createMcpServer({ createSession: () => Promise.resolve(session) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "test", version: "1" });
    await mcp.connect(serverSide);
    await client.connect(clientSide);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => [tool.name, tool.inputSchema.additionalProperties])).toEqual(
        TOOLS.map((tool) => [tool.name, false]),
      );
    } finally {
      await client.close();
    }
  });
});

describe("a malformed tool call", () => {
  const local = useSession(() => createEnvironment({ backend: "local" }));

  // One sentence that says what to send, not zod's "Invalid input: expected string, received undefined".
  it.each([
    ["terminal", {}, "command is required (a string)"],
    ["terminal", { command: 5 }, "command must be a string, not a number"],
    ["terminal", { command: "ls", timeout: "9" }, "timeout must be a number, not a string"],
    ["read_file", { path: null }, "path must be a string, not null"],
    ["read_file", { path: "x", limit: -1 }, "limit must be at least 1"],
    ["process", { action: "bogus" }, 'action must be one of "list", "poll", "log"'],
    ["terminal", { command: "" }, "command: the command is empty"],
  ])("%s %j says what to send", async (tool, args, problem) => {
    const { error } = await callTool(tool, args, { session: local.session });
    expect(error).toMatch(new RegExp(`^Invalid arguments for ${tool}: `));
    expect(error).toContain(problem);
    expect(error).toMatch(new RegExp(`; fix it and call ${tool} again\\.$`));
    expect((error as string).split(". ")).toHaveLength(1);
  });
});
