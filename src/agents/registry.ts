/**
 * The one place the tool registry plugs in. The MCP server, the model tool
 * definitions and the AI SDK tools all default to `defaultTools()` and run
 * every call through `callTool`, so a registry step that applies to all calls
 * (result persistence, say) is added here once.
 */

import { runTool, type ToolContext, type ToolDefinition, type ToolResult } from "../tools/tool.js";

export function defaultTools(): readonly ToolDefinition[] {
  return [];
}

/** Validates the arguments and runs the tool; never throws (failures are `{error}`). */
export function callTool(tool: ToolDefinition, args: unknown, context: ToolContext): Promise<ToolResult> {
  return runTool(tool, args, context);
}
