/**
 * The tool registry: every tool definition, and one way to call a tool by
 * name over an Environment (argument validation, the tool, then layer 2 of result
 * persistence). New tools join by adding their definition to TOOLS.
 */

import { createExecuteCodeTool, fileOperationTools } from "./files/file-tools.js";
import { persistLargeResult } from "./shared/result-persistence.js";
import { processTool } from "./process/process-tool.js";
import { processRegistry, type CompletionEvent } from "./process/process-registry.js";
import { DEFAULT_TOOL_SETTINGS } from "./shared/tool-settings.js";
import { terminalTool } from "./terminal/terminal-tool.js";
import { inputJsonSchema, runTool, type ToolContext, type ToolDefinition, type ToolResult } from "./shared/tool-definition.js";
import type { Environment } from "../core/environment.js";

/** execute_code scripts can call the terminal and the four file tools. */
const executeCodeTool = createExecuteCodeTool({ tools: [terminalTool as ToolDefinition, ...fileOperationTools] });

export const TOOLS: readonly ToolDefinition[] = Object.freeze([
  terminalTool,
  processTool,
  ...fileOperationTools,
  executeCodeTool,
] as ToolDefinition[]);

export function findTool(name: string): ToolDefinition | undefined {
  return TOOLS.find((tool) => tool.name === name);
}

/** Name, description and JSON Schema of every tool, as model APIs want them. */
export function toolSchemas(): { name: string; description: string; inputSchema: Record<string, unknown> }[] {
  return TOOLS.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: inputJsonSchema(tool) }));
}

/**
 * Runs the tool called `name`. Never throws: an unknown tool, bad arguments
 * or a failure come back as `{error}`. A result over the tool's threshold is
 * saved into the sandbox and replaced by a preview (layer 2).
 */
export async function callTool(name: string, args: unknown, context: ToolContext): Promise<ToolResult> {
  const tool = findTool(name);
  if (tool === undefined) {
    return { error: `Unknown tool ${JSON.stringify(name)}; available tools: ${TOOLS.map((t) => t.name).join(", ")}.` };
  }
  return callToolDefinition(tool, args, context);
}

/** Runs one tool definition (of the registry or not), then layer 2 of result persistence. Never throws. */
export async function callToolDefinition(tool: ToolDefinition, args: unknown, context: ToolContext): Promise<ToolResult> {
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

/** Completion events of background processes started with notify_on_complete, not yet seen by the model. */
export function drainCompletionEvents(session: Environment): CompletionEvent[] {
  return processRegistry(session).drainEvents();
}

export { terminalTool, processTool };
