/**
 * The providers' own tool sets, optional like UNIFIED_EXEC_TOOLS: a caller
 * passes one as `tools` (to createMcpServer, shellwrightTools,
 * toolDefinitions, handleToolCall) when its model was trained on it, beside
 * the default tools or instead of them.
 */

import type { ToolDefinition } from "../shared/tool-definition.js";
import { anthropicBashTool } from "./anthropic-bash.js";
import { anthropicTextEditorTool } from "./anthropic-text-editor.js";
import { openaiApplyPatchTool } from "./openai-apply-patch.js";
import { openaiShellTool } from "./openai-shell.js";

/** OpenAI's `shell` and `apply_patch` (GPT-5 and later, the Responses API's shell_call and apply_patch_call). */
export const OPENAI_NATIVE_TOOLS: readonly ToolDefinition[] = Object.freeze([
  openaiShellTool,
  openaiApplyPatchTool,
] as ToolDefinition[]);

/** Anthropic's `bash` and `str_replace_based_edit_tool` (Claude 4 and later). */
export const ANTHROPIC_NATIVE_TOOLS: readonly ToolDefinition[] = Object.freeze([
  anthropicBashTool,
  anthropicTextEditorTool,
] as ToolDefinition[]);
