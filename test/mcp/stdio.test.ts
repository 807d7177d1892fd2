/**
 * The MCP SDK's own client drives the server over real stdio: a spawned node
 * process serving the test tools over a real local session.
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError, type CallToolResult, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alive, eventually } from "../helpers/processes.js";
import { call, connect, textOf } from "./helpers.js";

describe("MCP server over stdio", () => {
  let client: Client;
  let scratch: string;

  beforeAll(async () => {
    ({ client } = await connect("serve-test-tools.mjs"));
    scratch = mkdtempSync(join(tmpdir(), "shellwright-mcp-test-"));
  });
  afterAll(async () => {
    await client.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("lists every tool with its input schema", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["run", "repeat", "broken"]);
    const run = tools.find((tool) => tool.name === "run")!;
    expect(run.description).toMatch(/bash command/);
    expect(run.inputSchema).toMatchObject({ type: "object", required: ["command"], properties: { command: { type: "string" } } });
    expect(run.inputSchema).not.toHaveProperty("$schema");
  });

  it("runs calls in one session: cwd and exported variables carry over", async () => {
    const first = await call(client, "run", { command: `cd ${scratch} && export MCP_TEST_VAR=kept` });
    expect(first.isError).toBe(false);
    const second = await call(client, "run", { command: "echo $MCP_TEST_VAR; pwd" });
    expect(second.isError).toBe(false);
    expect(second.structuredContent).toMatchObject({ output: `kept\n${scratch}\n`, exit_code: 0, cwd: scratch });
    expect(JSON.parse(textOf(second))).toEqual(second.structuredContent);
  });

  it("reports a non-zero exit as a normal result", async () => {
    const result = await call(client, "run", { command: "echo nope >&2; exit 3" });
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({ output: "nope\n", exit_code: 3 });
  });

  it("returns a tool failure and bad arguments as results with isError", async () => {
    const broken = await call(client, "broken", {});
    expect(broken.isError).toBe(true);
    expect(broken.structuredContent).toEqual({ error: "broken failed: the disk is on fire" });

    const invalid = await call(client, "repeat", { text: "a", times: 9 });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/^\{"error":"Invalid arguments for repeat: times: .*Fix the arguments and call repeat again\."\}$/);

    const defaulted = await call(client, "repeat", { text: "ab" });
    expect(defaulted.structuredContent).toEqual({ text: "abab" });
  });

  it("answers a call to a tool that does not exist with a protocol error", async () => {
    const error = await client.callTool({ name: "no_such_tool", arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((error as McpError).message).toMatch(/Unknown tool "no_such_tool". Available tools: run, repeat, broken\./);
  });

  it("sends progress notifications while a long command prints", async () => {
    const updates: Progress[] = [];
    const result = (await client.callTool(
      { name: "run", arguments: { command: "for i in 1 2 3 4 5 6; do echo step $i; sleep 0.2; done" } },
      undefined,
      { onprogress: (progress) => updates.push(progress) },
    )) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ exit_code: 0, output: "step 1\nstep 2\nstep 3\nstep 4\nstep 5\nstep 6\n" });
    expect(updates.length).toBeGreaterThan(0);
    for (const [index, update] of updates.entries()) {
      expect(update.message).toMatch(/^step [1-6]$/);
      if (index > 0) expect(update.progress).toBeGreaterThan(updates[index - 1]!.progress);
    }
    expect(updates.at(-1)!.progress).toBeLessThanOrEqual("step 1\n".length * 6);
  });

  it("interrupts the command when the client cancels, and the session stays usable", async () => {
    const pidFile = join(scratch, "cancel.pid");
    const controller = new AbortController();
    const pending = client.callTool(
      { name: "run", arguments: { command: `bash -c 'echo $$ > ${pidFile}; echo started; exec sleep 300'` } },
      undefined,
      { signal: controller.signal, onprogress: (progress) => progress.message === "started" && controller.abort("user pressed stop") },
    );
    const outcome = await pending.catch((error: unknown) => error);
    expect(String(outcome)).toMatch(/user pressed stop/);
    const pid = Number(readFileSync(pidFile, "utf8"));
    await eventually(() => !alive(pid), `the cancelled command (pid ${pid}) to end`);

    const after = await call(client, "run", { command: "echo still here" });
    expect(after.structuredContent).toMatchObject({ output: "still here\n", exit_code: 0 });
  });

  it("ends the server and its running commands when the client disconnects", async () => {
    const other = await connect("serve-test-tools.mjs");
    const serverPid = other.transport.pid!;
    const pidFile = join(scratch, "disconnect.pid");
    const controller = new AbortController();
    const started = new Promise<void>((resolve) => {
      other.client
        .callTool({ name: "run", arguments: { command: `bash -c 'echo $$ > ${pidFile}; echo started; exec sleep 300'` } }, undefined, {
          signal: controller.signal,
          onprogress: (progress) => progress.message === "started" && resolve(),
        })
        .catch(() => undefined);
    });
    await started;
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(alive(pid)).toBe(true);
    await other.client.close();
    await eventually(() => !alive(serverPid), "the server process to exit");
    await eventually(() => !alive(pid), `the running command (pid ${pid}) to end with the server`);
    controller.abort();
  });
});
