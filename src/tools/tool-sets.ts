/**
 * The tool sets by name, for a door whose user picks them with words
 * (`shellwright mcp --tools openai`): the Shellwright tools and the optional
 * sets a model may have been trained on.
 */

import { InvalidOptionError } from "../core/errors.js";
import { describe } from "../core/options.js";
import { ANTHROPIC_NATIVE_TOOLS, OPENAI_NATIVE_TOOLS } from "./native/native-tools.js";
import { TOOLS } from "./registry.js";
import type { ToolDefinition } from "./shared/tool-definition.js";
import { UNIFIED_EXEC_TOOLS } from "./unified-exec/unified-exec.js";
import { CHECKPOINT_TOOLS } from "./checkpoint/checkpoint-tool.js";

export const TOOL_SETS: Readonly<Record<string, readonly ToolDefinition[]>> = Object.freeze({
  shellwright: TOOLS,
  openai: OPENAI_NATIVE_TOOLS,
  anthropic: ANTHROPIC_NATIVE_TOOLS,
  codex: UNIFIED_EXEC_TOOLS,
  checkpoint: CHECKPOINT_TOOLS,
});

/** The tools of `names` ("openai" or "shellwright,anthropic"), in that order. */
export function toolSets(names: string): readonly ToolDefinition[] {
  const picked = names.split(",").map((name) => name.trim());
  const tools: ToolDefinition[] = [];
  for (const name of picked) {
    const set = Object.hasOwn(TOOL_SETS, name) ? TOOL_SETS[name] : undefined;
    if (set === undefined) {
      throw new InvalidOptionError(
        "tools",
        `unknown tool set ${describe(name)}; the sets are ${Object.keys(TOOL_SETS).join(", ")} (comma-separated for more than one)`,
      );
    }
    for (const tool of set) if (!tools.includes(tool)) tools.push(tool);
  }
  return tools;
}
