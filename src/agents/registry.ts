/**
 * The one place the tool registry plugs in. The MCP server, the model tool
 * definitions and the AI SDK tools all default to `defaultTools()` and run
 * every call through `callTool`, so a step that applies to all calls (result
 * persistence) is added here once.
 */

import { fileTools } from "../tools/file-tools.js";
import { TOOLS } from "../tools/index.js";
import { persistLargeResult } from "../tools/persistence.js";
import { DEFAULT_TOOL_SETTINGS } from "../tools/settings.js";
import { runTool, type ToolContext, type ToolDefinition, type ToolResult } from "../tools/tool.js";

/** terminal, process, read_file, write_file, patch, search_files, execute_code. */
export function defaultTools(): readonly ToolDefinition[] {
  const names = new Set(TOOLS.map((tool) => tool.name));
  return [...TOOLS, ...fileTools.filter((tool) => !names.has(tool.name))];
}

/**
 * Validates the arguments and runs the tool, then saves a result over its
 * tool's threshold into the sandbox and answers with a preview (layer 2 of
 * result persistence). Never throws: failures are `{error}`.
 */
export async function callTool(tool: ToolDefinition, args: unknown, context: ToolContext): Promise<ToolResult> {
  const result = await runTool(tool, args, context);
  try {
    return await persistLargeResult(tool.name, result, {
      session: context.session,
      settings: context.settings ?? DEFAULT_TOOL_SETTINGS,
      ...(context.callId === undefined ? {} : { callId: context.callId }),
    });
  } catch {
    return result;
  }
}
