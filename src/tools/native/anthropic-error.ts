/** An error of Anthropic's client tools: `Error: …`, as Anthropic's documentation writes them, for a tool_result with is_error. */

import type { ToolResult } from "../shared/tool-definition.js";

export const anthropicError = (message: string): ToolResult => ({
  error: message.startsWith("Error: ") ? message : `Error: ${message}`,
});
