/**
 * The native tool sets' calls and answers in each provider's own items:
 * a Responses API `shell_call`, `apply_patch_call` or `function_call` in,
 * its `…_output` item out; and an Anthropic `tool_result` block whose content
 * is the text the native tool answered (the tool's JSON for other tools).
 */

import type { Environment } from "../core/environment.js";
import { InvalidOptionError } from "../core/errors.js";
import { describe, plainObject } from "../core/options.js";
import { OPENAI_NATIVE_TOOLS } from "../tools/native/native-tools.js";
import type { ShellCommandOutput } from "../tools/native/openai-shell.js";
import { TOOLS } from "../tools/registry.js";
import type { ToolResult } from "../tools/shared/tool-definition.js";
import { handleToolCall, type HandleToolCallOptions } from "./definitions.js";

/** A Responses API output item that asks for a tool run (snake_case, as the API sends it). */
export type ResponsesToolCall =
  | {
      type: "shell_call";
      call_id: string;
      action: { commands: string[]; timeout_ms?: number | null; max_output_length?: number | null };
    }
  | {
      type: "apply_patch_call";
      call_id: string;
      operation: { type: "create_file" | "update_file" | "delete_file"; path: string; diff?: string };
    }
  | { type: "function_call"; call_id: string; name: string; arguments: string };

export type ResponsesToolOutput =
  | {
      type: "shell_call_output";
      call_id: string;
      output: {
        stdout: string;
        stderr: string;
        outcome: { type: "exit"; exit_code: number } | { type: "timeout" };
      }[];
      max_output_length: number | null;
    }
  | { type: "apply_patch_call_output"; call_id: string; status: "completed" | "failed"; output: string }
  | { type: "function_call_output"; call_id: string; output: string };

/**
 * Runs one tool call of a Responses API reply and returns the item that
 * answers it. `tools` defaults to the Shellwright tools and OpenAI's
 * native set. Never throws for the model's mistakes; a malformed item (not
 * one of these three types) is the caller's and throws.
 */
export async function handleResponsesItem(
  session: Environment,
  item: ResponsesToolCall,
  options: Omit<HandleToolCallOptions, "callId"> = {},
): Promise<ResponsesToolOutput> {
  const raw = plainObject("item", item);
  const callId = raw.call_id;
  if (typeof callId !== "string" || callId === "")
    throw new InvalidOptionError("item", `item.call_id must be a non-empty string, got ${describe(callId)}`);
  const run = (name: string, args: unknown): Promise<ToolResult> =>
    handleToolCall(session, name, args, { tools: [...TOOLS, ...OPENAI_NATIVE_TOOLS], ...options, callId });
  if (item.type === "shell_call") {
    const result = await run("shell", item.action);
    const entries = Array.isArray(result.output)
      ? (result.output as ShellCommandOutput[])
      : [{ stdout: "", stderr: String(result.error ?? ""), outcome: { type: "exit" as const, exit_code: null } }];
    return {
      type: "shell_call_output",
      call_id: callId,
      // The API takes no exit code for a command that did not run (refused, a bad call): 1, its reason on stderr.
      output: entries.map(({ stdout, stderr, outcome }) => ({
        stdout,
        stderr,
        outcome: outcome.type === "exit" ? { type: "exit" as const, exit_code: outcome.exit_code ?? 1 } : outcome,
      })),
      max_output_length: item.action.max_output_length ?? null,
    };
  }
  if (item.type === "apply_patch_call") {
    const result = await run("apply_patch", item.operation);
    const failed = result.status !== "completed";
    return {
      type: "apply_patch_call_output",
      call_id: callId,
      status: failed ? "failed" : "completed",
      output: String(result.output ?? result.error ?? ""),
    };
  }
  if (item.type === "function_call") {
    return {
      type: "function_call_output",
      call_id: callId,
      output: JSON.stringify(await run(item.name, item.arguments)),
    };
  }
  throw new InvalidOptionError(
    "item",
    `item.type must be shell_call, apply_patch_call or function_call, got ${describe((item as { type?: unknown }).type)}`,
  );
}

/** An Anthropic Messages API `tool_result` block. */
export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: string;
  is_error?: true;
}

const TEXT_KEYS = new Set(["content", "error", "exit_code"]);

/**
 * The `tool_result` block for a result of handleToolCall: a text result (the
 * native tools' `content` or `error`, nothing else but an `exit_code`) as that
 * text, any other result as its JSON; `is_error` when it has an `error`.
 */
export function anthropicToolResult(toolUseId: string, result: ToolResult): AnthropicToolResultBlock {
  const isError = typeof result.error === "string";
  const text = Object.keys(result).every((key) => TEXT_KEYS.has(key));
  const content =
    text && isError
      ? (result.error as string)
      : text && typeof result.content === "string"
        ? result.content
        : JSON.stringify(result);
  return { type: "tool_result", tool_use_id: toolUseId, content, ...(isError ? { is_error: true as const } : {}) };
}
