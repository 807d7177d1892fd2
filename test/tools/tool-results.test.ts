/**
 * Typed tool results (src/tools/tool-results.ts): `callTool` and
 * `handleToolCall` answer with the named tool's result type, and the real
 * results have the fields the types promise. The type assertions are checked
 * by `npm run check` (tsc over test/), the values by running the tools.
 */

import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import {
  callTool,
  createEnvironment,
  handleToolCall,
  type Environment,
  type ProcessToolResult,
  type ReadFileResult,
  type TerminalResult,
  type ToolResult,
  type ToolResults,
  type WriteFileResult,
} from "../../src/index.js";
import { terminalTool } from "../../src/tools/terminal/terminal-tool.js";

let env: Environment;
let dir: string;

beforeAll(async () => {
  env = await createEnvironment({ backend: "local", cwd: "/" });
  dir = (await env.execute("mktemp -d")).output.trim();
});
afterAll(async () => {
  await env.execute(`rm -rf ${dir}`);
  await env.close();
});

describe("typed tool results", () => {
  it("types callTool and handleToolCall by the tool's name, and keeps ToolResult for the rest", () => {
    const context = { session: {} as Environment };
    expectTypeOf(callTool("terminal", {}, context)).resolves.toEqualTypeOf<TerminalResult>();
    expectTypeOf(callTool("process", {}, context)).resolves.toEqualTypeOf<ProcessToolResult>();
    expectTypeOf(callTool(terminalTool, {}, context)).resolves.toEqualTypeOf<ToolResult>();
    expectTypeOf(callTool("no_such_tool" as string, {}, context)).resolves.toEqualTypeOf<ToolResult>();
    expectTypeOf(handleToolCall({} as Environment, "read_file", {})).resolves.toEqualTypeOf<ReadFileResult>();
    // Another tool list may call a tool of its own "read_file": its result is not known.
    expectTypeOf(
      handleToolCall({} as Environment, "read_file", {}, { tools: [] }),
    ).resolves.toEqualTypeOf<ToolResult>();
    expectTypeOf(handleToolCall({} as Environment, "made_up" as string, {})).resolves.toEqualTypeOf<ToolResult>();
    // Old callers that hold a ToolResult keep compiling.
    expectTypeOf<ToolResults[keyof ToolResults]>().toExtend<ToolResult>();
    expectTypeOf<TerminalResult["session_id"]>().toEqualTypeOf<string | undefined>();
  });

  it("gives a foreground command's output and exit code, and a background one's session_id and pid", async () => {
    const foreground = await callTool("terminal", { command: "echo typed; exit 4" }, { session: env });
    expect(foreground).toEqual({ output: "typed\n", exit_code: 4 });
    expectTypeOf(foreground.exit_code).toEqualTypeOf<number | undefined>();

    const background = await callTool("terminal", { command: "sleep 30", background: true }, { session: env });
    expect(background.session_id).toMatch(/^proc_/);
    if (background.session_id === undefined) throw new Error("no session_id");
    // Narrowed by session_id: the background shape, whose pid and status are always there.
    expectTypeOf(background.pid).toEqualTypeOf<number>();
    expectTypeOf(background.status).toEqualTypeOf<"running">();
    expect(background.pid).toBeGreaterThan(0);

    const killed = await callTool("process", { action: "kill", session_id: background.session_id }, { session: env });
    expect(killed).toMatchObject({ status: "killed", session_id: background.session_id });
    expectTypeOf(killed.status).toExtend<string | undefined>();
  });

  it("gives the file tools' fields under their names", async () => {
    const written: WriteFileResult = await handleToolCall(env, "write_file", {
      path: `${dir}/a.txt`,
      content: "one\ntwo\n",
    });
    expect(written).toMatchObject({ path: `${dir}/a.txt`, bytes_written: 8, dirs_created: false });
    const read = await handleToolCall(env, "read_file", { path: `${dir}/a.txt` });
    expect(read).toEqual({
      path: `${dir}/a.txt`,
      content: "1|one\n2|two",
      total_lines: 2,
      file_size: 8,
      truncated: false,
    });
    expectTypeOf(read.content).toEqualTypeOf<string | undefined>();
    const missing = await handleToolCall(env, "read_file", { path: `${dir}/b.txt` });
    expect(missing.error).toBe(`File not found: ${dir}/b.txt`);
    const found = await handleToolCall(env, "search_files", { pattern: "two", path: dir });
    expect(found.matches).toEqual([{ path: `${dir}/a.txt`, line: 2, content: "two" }]);
    expect(found.total_count).toBe(1);
  });
});
