/**
 * The tool registry: every tool definition, and the one way to find a tool and
 * to call one over an Environment (argument validation, the tool, then layer 2
 * of result persistence). Every door (the library, the MCP server, the model
 * tool definitions, the AI SDK tools, plans) goes through here, so a call
 * behaves the same whichever door it came through. New tools join by adding
 * their definition to TOOLS.
 */

import { describe } from "../core/options.js";
import { createExecuteCodeTool } from "./execute-code/execute-code-tool.js";
import { readFileTool } from "./files/read-file.js";
import { searchFilesTool } from "./files/search-files.js";
import { writeFileTool } from "./files/write-file.js";
import { patchTool } from "./patch/patch-tool.js";
import { processTool } from "./process/process-tool.js";
import { persistLargeResult } from "./shared/result-persistence.js";
import {
  inputJsonSchema,
  runTool,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from "./shared/tool-definition.js";
import { DEFAULT_TOOL_SETTINGS } from "./shared/tool-settings.js";
import { terminalTool } from "./terminal/terminal-tool.js";
import type { RegistryToolName, ToolResultOf } from "./tool-results.js";

/**
 * execute_code: its scripts can call the terminal and the four file tools
 * (not `process`, whose background processes would outlive the script).
 * `createExecuteCodeTool({ tools })` builds one over other tools.
 */
export const executeCodeTool = createExecuteCodeTool({
  tools: [terminalTool, readFileTool, writeFileTool, patchTool, searchFilesTool] as ToolDefinition[],
});

/** terminal, process, read_file, write_file, patch, search_files, execute_code. */
export const TOOLS: readonly ToolDefinition[] = Object.freeze([
  terminalTool,
  processTool,
  readFileTool,
  writeFileTool,
  patchTool,
  searchFilesTool,
  executeCodeTool,
] as ToolDefinition[]);

/** The tool called `name` among `tools`. */
export function findTool(name: string, tools: readonly ToolDefinition[] = TOOLS): ToolDefinition | undefined {
  return tools.find((tool) => tool.name === name);
}

/** What a caller (often a model) reads when it asks for a tool that is not there. */
export function unknownToolMessage(name: unknown, tools: readonly ToolDefinition[] = TOOLS): string {
  const names = tools.map((tool) => tool.name).join(", ") || "none";
  return `Unknown tool ${describe(name)}. Available tools: ${names}.`;
}

/** Name, description and JSON Schema of every tool, as model APIs want them. */
export function toolSchemas(): { name: string; description: string; inputSchema: Record<string, unknown> }[] {
  return TOOLS.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: inputJsonSchema(tool) }));
}

/**
 * Runs a tool: a definition (of the registry or not), or the name of one in
 * TOOLS. Never throws: an unknown name, bad arguments or a failure come back
 * as `{error}`. A result over the tool's threshold is saved into the sandbox
 * and replaced by a preview (layer 2). Called with the name of a registry
 * tool, the result has that tool's type (tool-results.ts).
 */
export async function callTool<Name extends RegistryToolName>(
  tool: Name,
  args: unknown,
  context: ToolContext,
): Promise<ToolResultOf<Name>>;
export async function callTool(tool: ToolDefinition | string, args: unknown, context: ToolContext): Promise<ToolResult>;
export async function callTool(
  tool: ToolDefinition | string,
  args: unknown,
  context: ToolContext,
): Promise<ToolResult> {
  const definition = typeof tool === "string" ? findTool(tool) : tool;
  if (definition === undefined) return { error: unknownToolMessage(tool) };
  const result = await runTool(definition, args, context);
  try {
    return await persistLargeResult(definition.name, result, {
      session: context.session,
      settings: context.settings ?? DEFAULT_TOOL_SETTINGS,
      ...(context.callId === undefined ? {} : { callId: context.callId }),
    });
  } catch {
    return result;
  }
}
