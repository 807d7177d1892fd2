/**
 * The provider items of the native tool sets over a real local session: a
 * Responses API reply's shell_call, apply_patch_call and function_call run
 * and answered with their output items; an Anthropic tool_result block made
 * from a native tool's text or any tool's JSON.
 */

import { describe, expect, it } from "vitest";
import { anthropicToolResult, handleResponsesItem } from "../../src/agents/native-calls.js";
import { handleToolCall } from "../../src/agents/definitions.js";
import { ANTHROPIC_NATIVE_TOOLS } from "../../src/tools/native/native-tools.js";
import { createEnvironment, InvalidOptionError } from "../../src/index.js";
import { useSession } from "../helpers/session.js";

describe("handleResponsesItem", () => {
  const local = useSession(() => createEnvironment({ backend: "local", cwd: "/tmp" }), { scratch: true });

  it("answers a shell_call with its shell_call_output, the model's nulls read as not given", async () => {
    const output = await handleResponsesItem(local.session, {
      type: "shell_call",
      call_id: "call_1",
      action: { commands: [`cd ${local.dir}`, "pwd; ls missing"], timeout_ms: null, max_output_length: 500 },
    });
    expect(output).toEqual({
      type: "shell_call_output",
      call_id: "call_1",
      max_output_length: 500,
      output: [
        { stdout: "", stderr: "", outcome: { type: "exit", exit_code: 0 } },
        {
          stdout: `${local.dir}\n`,
          stderr: "ls: cannot access 'missing': No such file or directory\n",
          outcome: { type: "exit", exit_code: 2 },
        },
      ],
    });
  });

  it("answers apply_patch_call with apply_patch_call_output, failed with the reason", async () => {
    const create = { type: "create_file" as const, path: "a.txt", diff: "+one\n+" };
    expect(
      await handleResponsesItem(local.session, { type: "apply_patch_call", call_id: "c2", operation: create }),
    ).toEqual({
      type: "apply_patch_call_output",
      call_id: "c2",
      status: "completed",
      output: "Created a.txt",
    });
    expect(
      await handleResponsesItem(local.session, { type: "apply_patch_call", call_id: "c3", operation: create }),
    ).toEqual({
      type: "apply_patch_call_output",
      call_id: "c3",
      status: "failed",
      output:
        "a.txt already exists; create_file does not replace a file: change it with update_file, or delete it first. Nothing was changed.",
    });
  });

  it("answers a function_call with the tool's JSON, and throws for an item it cannot answer", async () => {
    const output = await handleResponsesItem(local.session, {
      type: "function_call",
      call_id: "c4",
      name: "terminal",
      arguments: '{"command":"echo hi"}',
    });
    expect(output).toMatchObject({ type: "function_call_output", call_id: "c4" });
    expect(JSON.parse(output.output as string)).toEqual({ output: "hi\n", exit_code: 0 });
    await expect(
      handleResponsesItem(local.session, { type: "web_search_call", call_id: "c5" } as never),
    ).rejects.toThrow(
      new InvalidOptionError(
        "item",
        'item.type must be shell_call, apply_patch_call or function_call, got "web_search_call"',
      ),
    );
    await expect(
      handleResponsesItem(local.session, { type: "shell_call", action: { commands: [] } } as never),
    ).rejects.toThrow(/item\.call_id must be a non-empty string, got undefined/);
  });

  it("makes Anthropic tool_result blocks: a native tool's text as it is, another tool's JSON", async () => {
    const tools = ANTHROPIC_NATIVE_TOOLS;
    expect(
      anthropicToolResult("t1", await handleToolCall(local.session, "bash", { command: "echo hi" }, { tools })),
    ).toEqual({
      type: "tool_result",
      tool_use_id: "t1",
      content: "hi",
    });
    const missing = await handleToolCall(
      local.session,
      "str_replace_based_edit_tool",
      { command: "view", path: "/nope" },
      { tools },
    );
    expect(anthropicToolResult("t2", missing)).toEqual({
      type: "tool_result",
      tool_use_id: "t2",
      content: "Error: File not found",
      is_error: true,
    });
    expect(anthropicToolResult("t3", { output: "x", exit_code: 0 })).toEqual({
      type: "tool_result",
      tool_use_id: "t3",
      content: '{"output":"x","exit_code":0}',
    });
  });
});
