/**
 * PTY processes through a real MCP client: `shellwright mcp` over stdio
 * advertises the pty fields and actions, starts a program under a
 * pseudo-terminal, takes keys, and answers screen; with a stderr nobody
 * reads, a flood into a PTY neither writes there nor keeps it from exiting.
 */

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { describe, expect, it } from "vitest";
import { bin } from "../helpers/cli.js";
import { noStaticHelper, skipAllUnless } from "../helpers/native-helper.js";
import { unreadPipe } from "../helpers/unread-pipe.js";
import { call, useLocalMcpCli } from "./helpers.js";

describe("pty through the MCP server (a real client over stdio)", () => {
  skipAllUnless(noStaticHelper);
  const cli = useLocalMcpCli("shellwright-mcp-pty-");

  it("advertises pty, cols and rows on terminal, and the terminal actions on process", async () => {
    const { tools } = await cli.client.listTools();
    const terminal = tools.find((tool) => tool.name === "terminal")!;
    expect(Object.keys(terminal.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["pty", "cols", "rows"]));
    const process = tools.find((tool) => tool.name === "process")!;
    expect(JSON.stringify(process.inputSchema)).toMatch(/"screen"/);
    expect(Object.keys(process.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["keys", "pattern"]));
  });

  it("starts a PTY process, sends keys, and reads its screen", async () => {
    const started = await call(cli.client, "terminal", {
      command: "PS1='$ ' exec bash --norc -i",
      background: true,
      pty: true,
      cols: 60,
      rows: 10,
    });
    expect(started.isError, JSON.stringify(started.content)).toBe(false);
    const id = (started.structuredContent as { session_id: string }).session_id;
    const ready = await call(cli.client, "process", { action: "wait", session_id: id, pattern: "\\$ $", timeout: 30 });
    expect(ready.structuredContent).toMatchObject({ status: "matched" });
    const keys = await call(cli.client, "process", {
      action: "keys",
      session_id: id,
      keys: ["e", "c", "h", "o", " ", "MCP-$((6*7))", "Enter"],
    });
    expect(keys.isError, JSON.stringify(keys.content)).toBe(false);
    const echoed = await call(cli.client, "process", {
      action: "wait",
      session_id: id,
      pattern: "MCP-42",
      timeout: 30,
    });
    expect(echoed.structuredContent).toMatchObject({ status: "matched" });
    const screen = await call(cli.client, "process", { action: "screen", session_id: id });
    const shot = screen.structuredContent as { screen: string; cols: number; rows: number; cursor: unknown };
    expect(shot).toMatchObject({ cols: 60, rows: 10, cursor: { row: expect.any(Number), col: expect.any(Number) } });
    expect(shot.screen.split("\n")).toContain("MCP-42");
    expect(await call(cli.client, "process", { action: "kill", session_id: id })).toMatchObject({ isError: false });
  });
});

describe("shellwright mcp whose stderr nobody reads (a real process)", () => {
  skipAllUnless(noStaticHelper);

  it("a PTY fed random bytes prints nothing to stderr, and the server exits when its client goes away", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "shellwright-mcp-pty-stderr-"));
    const pipe = unreadPipe();
    const child = spawn(process.execPath, [bin, "mcp", "--backend", "local", "--cwd", scratch], {
      stdio: ["pipe", "pipe", pipe.writeFd],
    });
    const exit = new Promise<number | string>((resolve) =>
      child.once("close", (code, signal) => resolve(code ?? signal ?? "unknown")),
    );
    try {
      const client = new Client({ name: "shellwright-test", version: "0.0.0" });
      await client.connect(new StdioServerTransport(child.stdout!, child.stdin!));
      const started = await call(client, "terminal", {
        command: "head -c 100000 /dev/urandom; echo; echo FLOOD-END; exec cat",
        background: true,
        pty: true,
      });
      const id = (started.structuredContent as { session_id: string }).session_id;
      const seen = await call(client, "process", { action: "wait", session_id: id, pattern: "FLOOD-END", timeout: 60 });
      expect(seen.structuredContent).toMatchObject({ status: "matched" });
      child.stdin!.end();
      // Only catches a hang: the server ends its session and exits within seconds of losing its client.
      const limit = setTimeout(() => child.kill("SIGKILL"), 60_000);
      const code = await exit;
      clearTimeout(limit);
      expect(code).toBe(0);
      // Nothing from the emulator, in the first 64 KiB (what the pipe holds) or anywhere.
      expect(pipe.drain()).not.toMatch(/xterm|Parsing error/);
    } finally {
      child.kill("SIGKILL");
      pipe.close();
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 120_000);
});
