/**
 * The one place the tool registry plugs into the agent doors: the MCP server,
 * the model tool definitions and the AI SDK tools all default to
 * `defaultTools()` and run every call through `callTool`, which applies result
 * persistence (layer 2) once for all of them.
 */

import { callToolDefinition, TOOLS } from "../tools/registry.js";
import type { ToolDefinition } from "../tools/shared/tool-definition.js";

/** terminal, process, read_file, write_file, patch, search_files, execute_code. */
export function defaultTools(): readonly ToolDefinition[] {
  return TOOLS;
}

export const callTool = callToolDefinition;
