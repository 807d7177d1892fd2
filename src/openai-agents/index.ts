/**
 * `shellwright/openai-agents`: Shellwright for the OpenAI Agents SDK
 * (`@openai/agents`, an optional peer dependency; `import "shellwright"`
 * never loads it): `Shell` and `Editor` over any environment, for the SDK's
 * `shellTool({ shell })` and `applyPatchTool({ editor })`.
 */

import type { ApplyPatchTool, ShellTool } from "@openai/agents";
import type { Environment } from "../core/environment.js";
import { plainObject, rejectUnknown } from "../core/options.js";
import { ShellwrightEditor, type ShellwrightEditorOptions } from "./editor.js";
import { loadAgents } from "./load-agents.js";
import { ShellwrightShell } from "./shell.js";

export { ShellwrightEditor, ShellwrightShell };
export type { ShellwrightEditorOptions };
export type { ShellwrightShellOptions } from "./shell.js";

const { applyPatchTool, shellTool } = loadAgents();

/** `[shellTool({ shell }), applyPatchTool({ editor })]` over `session`, for an Agent's `tools`. */
export function shellwrightAgentTools(
  session: Environment,
  options: ShellwrightEditorOptions = {},
): [ShellTool, ApplyPatchTool] {
  rejectUnknown("shellwrightAgentTools", plainObject("options", options), ["settings", "safeRoot", "denyPaths"]);
  const shell = new ShellwrightShell(session, options.settings === undefined ? {} : { settings: options.settings });
  return [shellTool({ shell }), applyPatchTool({ editor: new ShellwrightEditor(session, options) })];
}
