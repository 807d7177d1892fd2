/** Checks a caller's tool list once, so every door sees the same tools by the same names. */

import { InvalidOptionError } from "../core/errors.js";
import { describe } from "../core/options.js";
import { TOOLS } from "../tools/registry.js";
import type { ToolDefinition } from "../tools/shared/tool-definition.js";

/** Tool names every provider accepts (OpenAI's and Anthropic's rules agree on this). */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The caller's tools, checked, or TOOLS when it passed none. */
export function toolList(tools: readonly ToolDefinition[] | undefined): readonly ToolDefinition[] {
  if (tools === undefined) return TOOLS;
  if (!Array.isArray(tools))
    throw new InvalidOptionError("tools", `tools must be an array of tool definitions, got ${describe(tools)}`);
  const seen = new Set<string>();
  for (const [index, tool] of (tools as readonly unknown[]).entries()) {
    const candidate = tool as Partial<ToolDefinition> | null;
    if (
      typeof candidate !== "object" ||
      candidate === null ||
      typeof candidate.handler !== "function" ||
      typeof candidate.inputSchema?.safeParse !== "function"
    ) {
      throw new InvalidOptionError(
        `tools[${index}]`,
        `tools[${index}] must be a tool definition (name, description, inputSchema, handler), got ${describe(tool)}`,
      );
    }
    if (typeof candidate.name !== "string" || !TOOL_NAME.test(candidate.name)) {
      throw new InvalidOptionError(
        `tools[${index}].name`,
        `tools[${index}].name must be 1-64 letters, digits, _ or -, got ${describe(candidate.name)}`,
      );
    }
    if (seen.has(candidate.name))
      throw new InvalidOptionError("tools", `tools has two tools named ${describe(candidate.name)}`);
    seen.add(candidate.name);
  }
  return tools;
}
