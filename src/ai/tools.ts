/**
 * The Shellwright tools in the AI SDK's `tool()` shape, over one session:
 * `generateText({ model, tools: shellwrightTools(session), … })`.
 *
 * The model sees the same JSON Schema as through MCP and `toolDefinitions`;
 * the AI SDK's abort signal interrupts the tool's commands (exit code 130),
 * and a failure comes back as a result with `error`, not as a thrown error,
 * so the model can read it and try again.
 */

import type { ToolSet } from "ai";
import { plainObject, rejectUnknown } from "../core/options.js";
import { objectSchema, withoutDialect } from "../agents/definitions.js";
import type { Environment } from "../core/environment.js";
import { toolList } from "../agents/tool-list.js";
import { loadAi } from "./load-ai.js";
import { callTool } from "../tools/registry.js";
import { toolSettings, type ToolSettingsInput } from "../tools/shared/tool-settings.js";
import type { ToolDefinition, ToolResult } from "../tools/shared/tool-definition.js";

export interface ShellwrightToolsOptions {
  /** @default the Shellwright tools */
  tools?: readonly ToolDefinition[];
  /** Limits and hooks (output limits, the approval hook, result persistence). @default DEFAULT_TOOL_SETTINGS */
  settings?: ToolSettingsInput;
}

const { jsonSchema, tool } = loadAi();

export function shellwrightTools(session: Environment, options: ShellwrightToolsOptions = {}): ToolSet {
  rejectUnknown("shellwrightTools", plainObject("options", options), ["tools", "settings"]);
  const settings = toolSettings(options.settings);
  const set: ToolSet = {};
  for (const definition of toolList(options.tools)) {
    set[definition.name] = tool({
      description: definition.description,
      inputSchema: jsonSchema<Record<string, unknown>>(withoutDialect(objectSchema(definition))),
      execute: (
        input: Record<string, unknown>,
        { abortSignal, toolCallId }: { abortSignal?: AbortSignal; toolCallId: string },
      ): Promise<ToolResult> =>
        callTool(definition, input, {
          session,
          settings,
          callId: toolCallId,
          ...(abortSignal === undefined ? {} : { signal: abortSignal }),
        }),
    });
  }
  return set;
}
