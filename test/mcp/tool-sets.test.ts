/**
 * `shellwright mcp --tools`: the native tool sets served to an MCP client by
 * a real server process over stdio, and a set it does not know refused.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, connect, textOf, usageFailure } from "./helpers.js";

describe("shellwright mcp --tools", () => {
  let client: Client;
  let scratch: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "shellwright-mcp-tools-"));
    ({ client } = await connect("run-mcp-cli.mjs", [
      "--backend",
      "local",
      "--cwd",
      scratch,
      "--tools",
      "anthropic,openai",
    ]));
  });
  afterAll(async () => {
    await client.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("serves the sets named, in that order, and runs their calls in one session", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["bash", "str_replace_based_edit_tool", "shell", "apply_patch"]);
    const created = await call(client, "apply_patch", { type: "create_file", path: "a.txt", diff: "+hello\n+" });
    expect(JSON.parse(textOf(created))).toEqual({ status: "completed", output: "Created a.txt" });
    const viewed = await call(client, "str_replace_based_edit_tool", { command: "view", path: "a.txt" });
    expect(JSON.parse(textOf(viewed))).toEqual({ content: "1: hello" });
    const failed = await call(client, "bash", { command: "cat missing.txt" });
    expect(failed.isError).toBe(true);
    expect(JSON.parse(textOf(failed))).toEqual({
      error: "cat: missing.txt: No such file or directory",
      exit_code: 1,
    });
  });

  it("refuses a set it does not know with a usage error that names it", () => {
    const failure = usageFailure(["--tools", "openai,gemini"]);
    expect(failure?.status).toBe(2);
    expect(failure?.stderr).toMatch(
      /--tools: unknown tool set "gemini"; the sets are shellwright, openai, anthropic, codex/,
    );
  });
});
