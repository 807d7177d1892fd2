/**
 * Anthropic's bash tool on a local session, beyond the compat suite: the
 * texts of a failing command and of a refusal, restart with a command after
 * it, an interrupt, the approval hook, and restart ending the session's
 * background processes (terminal's, exec_command's) too.
 */

import { describe, expect, it } from "vitest";
import { anthropicBashTool } from "../../../src/tools/native/anthropic-bash.js";
import { processRegistry } from "../../../src/tools/process/process-registry.js";
import { callTool } from "../../../src/tools/registry.js";
import type { ToolDefinition } from "../../../src/tools/shared/tool-definition.js";
import { toolSettings } from "../../../src/tools/shared/tool-settings.js";
import { terminalTool } from "../../../src/tools/terminal/terminal-tool.js";
import { useLocalTool } from "../../helpers/local-tool.js";

const tool = anthropicBashTool as ToolDefinition;

describe("bash (Anthropic)", () => {
  const local = useLocalTool(tool);
  const bash = local.call;

  it("answers a failing command with its output as the error, as Anthropic's documentation shows", async () => {
    expect(await bash({ command: "nonexistentcommand" })).toEqual({
      error: "bash: line 1: nonexistentcommand: command not found",
      exit_code: 127,
    });
    expect(await bash({ command: "false" })).toEqual({ error: "Error: exit code 1", exit_code: 1 });
    expect(await bash({ command: "printf 'a\\nb\\n\\n'" })).toEqual({ content: "a\nb\n", exit_code: 0 });
  });

  it("restarts, then runs a command given with the restart", async () => {
    await bash({ command: "export BEFORE=1" });
    expect(await bash({ restart: true, command: "echo ${BEFORE-unset}" })).toEqual({ content: "unset", exit_code: 0 });
  });

  it("ends the session's background processes on restart, whichever tool started them", async () => {
    const started = await callTool(
      terminalTool as ToolDefinition,
      { command: "sleep 600", background: true },
      { session: local.session },
    );
    const registry = processRegistry(local.session, toolSettings({}).processes);
    const process = registry.get(String(started.session_id))!;
    expect(process.status).toBe("running");
    expect(await bash({ restart: true })).toEqual({ content: "Bash session restarted" });
    expect(process.status).toBe("killed");
  });

  it("is interrupted by the caller's signal, the session still usable", async () => {
    const controller = new AbortController();
    const pending = bash({ command: "echo started; sleep 600" }, undefined, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 500));
    controller.abort();
    expect(await pending).toEqual({ error: "Error: Command interrupted", exit_code: 130 });
    expect(await bash({ command: "echo after" })).toEqual({ content: "after", exit_code: 0 });
  });

  it("asks the approval hook, and refuses a call without a command", async () => {
    expect(await bash({ command: "rm -rf /tmp/nothing" }, { approve: () => "not today" })).toEqual({
      error: "Error: not today",
    });
    expect(await bash({ command: " " })).toEqual({ error: "Error: no command provided." });
    expect(await bash({ command: "ls", timeout: 5 })).toEqual({
      error: expect.stringMatching(/^Error: Invalid arguments for bash: unknown argument "timeout" for bash/),
    });
  });
});
