/** One local session for a test file's calls of one tool: opened before its tests, closed after them. */

import { useSession } from "./session.js";
import { createEnvironment, type Environment } from "../../src/index.js";
import { callTool } from "../../src/tools/registry.js";
import type { ToolDefinition, ToolResult } from "../../src/tools/shared/tool-definition.js";
import { toolSettings, type ToolSettingsInput } from "../../src/tools/shared/tool-settings.js";

export interface LocalTool {
  /** The session, once the file's tests run. */
  readonly session: Environment;
  call(args: unknown, settings?: ToolSettingsInput, signal?: AbortSignal): Promise<ToolResult>;
}

export function useLocalTool(tool: ToolDefinition, cwd = "/tmp"): LocalTool {
  const local = useSession(() => createEnvironment({ backend: "local", cwd }));
  return {
    get session(): Environment {
      return local.session;
    },
    call: (args, settings, signal) =>
      callTool(tool, args, {
        session: local.session,
        ...(settings === undefined ? {} : { settings: toolSettings(settings) }),
        ...(signal === undefined ? {} : { signal }),
      }),
  };
}
