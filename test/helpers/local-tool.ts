/** One local session for a test file's calls of one tool: opened before its tests, closed after them. */

import { afterAll, beforeAll } from "vitest";
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
  let session: Environment | undefined;
  beforeAll(async () => {
    session = await createEnvironment({ backend: "local", cwd });
  });
  afterAll(async () => {
    await session?.close();
  });
  return {
    get session(): Environment {
      if (session === undefined) throw new Error("useLocalTool: the session opens before the tests run");
      return session;
    },
    call: (args, settings, signal) =>
      callTool(tool, args, {
        session: session!,
        ...(settings === undefined ? {} : { settings: toolSettings(settings) }),
        ...(signal === undefined ? {} : { signal }),
      }),
  };
}
