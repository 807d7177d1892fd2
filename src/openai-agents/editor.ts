/**
 * The OpenAI Agents SDK's `Editor` over a Shellwright environment, for
 * `applyPatchTool({ editor })`: each `apply_patch_call` operation runs through
 * the `apply_patch` tool (tools/native/openai-apply-patch.ts), on the file
 * tools' engine: checked whole before anything is written, written
 * atomically, never over a file changed since it was read. A failed
 * operation comes back as `status: "failed"` with the reason, which the SDK
 * hands to the model.
 */

import type { ApplyPatchOperation, ApplyPatchResult, Editor } from "@openai/agents";
import type { Environment } from "../core/environment.js";
import { plainObject, rejectUnknown } from "../core/options.js";
import { createApplyPatchTool, type ApplyPatchToolOptions } from "../tools/native/openai-apply-patch.js";
import { callTool } from "../tools/registry.js";
import type { ToolDefinition } from "../tools/shared/tool-definition.js";
import { toolSettings, type ToolSettings, type ToolSettingsInput } from "../tools/shared/tool-settings.js";

export interface ShellwrightEditorOptions extends ApplyPatchToolOptions {
  /** Limits and hooks. @default DEFAULT_TOOL_SETTINGS */
  settings?: ToolSettingsInput;
}

export class ShellwrightEditor implements Editor {
  readonly #session: Environment;
  readonly #settings: ToolSettings;
  readonly #tool: ToolDefinition;

  constructor(session: Environment, options: ShellwrightEditorOptions = {}) {
    rejectUnknown("ShellwrightEditor", plainObject("options", options), ["settings", "safeRoot", "denyPaths"]);
    const { settings, ...guard } = options;
    this.#session = session;
    this.#settings = toolSettings(settings);
    this.#tool = createApplyPatchTool(guard) as ToolDefinition;
  }

  createFile(operation: Extract<ApplyPatchOperation, { type: "create_file" }>): Promise<ApplyPatchResult> {
    return this.#apply({ type: "create_file", path: operation.path, diff: operation.diff });
  }

  updateFile(operation: Extract<ApplyPatchOperation, { type: "update_file" }>): Promise<ApplyPatchResult> {
    const moveTo = (operation as { moveTo?: string }).moveTo;
    return this.#apply({
      type: "update_file",
      path: operation.path,
      diff: operation.diff,
      ...(moveTo === undefined ? {} : { move_to: moveTo }),
    });
  }

  deleteFile(operation: Extract<ApplyPatchOperation, { type: "delete_file" }>): Promise<ApplyPatchResult> {
    return this.#apply({ type: "delete_file", path: operation.path });
  }

  async #apply(args: Record<string, unknown>): Promise<ApplyPatchResult> {
    const result = await callTool(this.#tool, args, { session: this.#session, settings: this.#settings });
    return { status: result.status === "completed" ? "completed" : "failed", output: String(result.output ?? "") };
  }
}
