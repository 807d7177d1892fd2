/**
 * The OpenAI Agents SDK's `Shell` over a Shellwright environment, for
 * `shellTool({ shell })`: each `shell_call` runs through the `shell` tool of
 * OPENAI_NATIVE_TOOLS (tools/native/openai-shell.ts), so its commands share
 * the session's state, a timeout kills their tree and secrets are masked, on
 * any backend.
 */

import type { Shell, ShellAction, ShellResult } from "@openai/agents";
import type { Environment } from "../core/environment.js";
import { plainObject, rejectUnknown } from "../core/options.js";
import { openaiShellTool, type ShellCommandOutput } from "../tools/native/openai-shell.js";
import { callTool } from "../tools/registry.js";
import { toolSettings, type ToolSettings, type ToolSettingsInput } from "../tools/shared/tool-settings.js";

export interface ShellwrightShellOptions {
  /** Limits and hooks (output limits, the approval hook). @default DEFAULT_TOOL_SETTINGS */
  settings?: ToolSettingsInput;
}

export class ShellwrightShell implements Shell {
  readonly #session: Environment;
  readonly #settings: ToolSettings;

  constructor(session: Environment, options: ShellwrightShellOptions = {}) {
    rejectUnknown("ShellwrightShell", plainObject("options", options), ["settings"]);
    this.#session = session;
    this.#settings = toolSettings(options.settings);
  }

  async run(action: ShellAction): Promise<ShellResult> {
    const result = await callTool(
      openaiShellTool,
      {
        commands: action.commands,
        ...(action.timeoutMs === undefined ? {} : { timeout_ms: action.timeoutMs }),
        ...(action.maxOutputLength === undefined ? {} : { max_output_length: action.maxOutputLength }),
      },
      { session: this.#session, settings: this.#settings },
    );
    const entries = (Array.isArray(result.output) ? result.output : []) as ShellCommandOutput[];
    return {
      output: entries.map(({ stdout, stderr, outcome }) => ({
        stdout,
        stderr,
        outcome: outcome.type === "timeout" ? { type: "timeout" } : { type: "exit", exitCode: outcome.exit_code },
      })),
      ...(action.maxOutputLength === undefined ? {} : { maxOutputLength: action.maxOutputLength }),
      providerData: { working_directory: this.#session.cwd },
    };
  }
}
