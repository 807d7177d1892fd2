/**
 * The OpenAI Agents SDK runs an agent whose model is the SDK's own
 * ScriptedModel (no network): it emits shell_call and apply_patch_call items,
 * the SDK's runner executes them through ShellwrightShell and
 * ShellwrightEditor on a real local session, and the results come back in the
 * SDK's types, as the items the next model request carries.
 */

import { Agent, applyPatchTool, run, setTracingDisabled, shellTool } from "@openai/agents";
import { assistantMessage, ScriptedModel } from "@openai/agents/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../src/index.js";
import { ShellwrightEditor, ShellwrightShell, shellwrightAgentTools } from "../../src/openai-agents/index.js";
import { AGENTS_INSTALL_HINT, loadAgents } from "../../src/openai-agents/load-agents.js";
import { ShellwrightError } from "../../src/index.js";
import { missingModule } from "../helpers/missing-module.js";

setTracingDisabled(true);

type Item = { type: string; [key: string]: unknown };

/** The tool output for `callId` the runner produced, as the model's last request carries it. */
const outputOf = (model: ScriptedModel, callId: string): Item | undefined =>
  (model.lastCall!.request.input as Item[]).find((item) => item.type.endsWith("_output") && item.callId === callId);

describe("shellwright/openai-agents in an agent run", () => {
  let env: Environment;
  let dir: string;

  beforeAll(async () => {
    env = await createEnvironment({ backend: "local", env: { AGENT_API_TOKEN: "sk-agents-secret-0123456789" } });
    dir = (await env.execute("mktemp -d")).output.trim();
  });
  afterAll(async () => {
    await env.execute(`rm -rf ${dir}`);
    await env.close();
  });

  it("runs shell_call and apply_patch_call items through the session, results in the SDK's types", async () => {
    const model = new ScriptedModel([
      [
        {
          type: "shell_call",
          callId: "call_shell",
          status: "completed",
          action: { commands: [`cd ${dir} && export GREETING=hi`, "echo $GREETING from $PWD; echo oops >&2; exit 3"] },
        },
      ],
      [
        {
          type: "apply_patch_call",
          callId: "call_create",
          status: "completed",
          operation: { type: "create_file", path: "notes.md", diff: "+- [ ] milk\n+- [ ] eggs\n+" },
        },
      ],
      [
        {
          type: "apply_patch_call",
          callId: "call_update",
          status: "completed",
          operation: { type: "update_file", path: "notes.md", diff: "@@\n - [ ] milk\n-- [ ] eggs\n+- [x] eggs\n" },
        },
        {
          type: "apply_patch_call",
          callId: "call_missing",
          status: "completed",
          operation: { type: "update_file", path: "notes.md", diff: "@@\n-- [ ] bread\n+- [x] bread\n" },
        },
      ],
      [
        {
          type: "shell_call",
          callId: "call_timeout",
          status: "completed",
          action: {
            commands: ["echo $AGENT_API_TOKEN; sleep 600 & echo $! > bg.pid; sleep 600", "echo never"],
            timeoutMs: 1500,
          },
        },
      ],
      [assistantMessage("done")],
    ]);
    const agent = new Agent({ name: "shellwright", instructions: "test", model, tools: shellwrightAgentTools(env) });
    const result = await run(agent, "do it");
    expect(result.finalOutput).toBe("done");
    model.assertComplete();

    expect(outputOf(model, "call_shell")).toMatchObject({
      type: "shell_call_output",
      output: [
        { stdout: "", stderr: "", outcome: { type: "exit", exitCode: 0 } },
        { stdout: `hi from ${dir}\n`, stderr: "oops\n", outcome: { type: "exit", exitCode: 3 } },
      ],
    });
    expect(outputOf(model, "call_create")).toMatchObject({
      type: "apply_patch_call_output",
      status: "completed",
      output: "Created notes.md",
    });
    expect(outputOf(model, "call_update")).toMatchObject({ type: "apply_patch_call_output", status: "completed" });
    const missing = outputOf(model, "call_missing");
    expect(missing).toMatchObject({ status: "failed" });
    expect(missing!.output).toMatch(
      /notes\.md: hunk 1: could not find the lines to change:\n- \[ \] bread\n[\s\S]*Nothing was changed\.$/,
    );
    // The create made the file relative to the session's cwd, which the first shell_call moved.
    expect((await env.execute(`cat ${dir}/notes.md`)).output).toBe("- [ ] milk\n- [x] eggs\n");

    const timedOut = outputOf(model, "call_timeout");
    expect(timedOut).toMatchObject({ type: "shell_call_output" });
    const outputs = timedOut!.output as { stdout: string; outcome: { type: string } }[];
    // The second command never ran; the secret is masked; the tree, the & job included, is gone.
    expect(outputs).toEqual([expect.objectContaining({ stdout: "[REDACTED]\n", outcome: { type: "timeout" } })]);
    const pid = (await env.execute(`cat ${dir}/bg.pid`)).output.trim();
    expect(pid).toMatch(/^\d+$/);
    expect((await env.execute(`kill -0 ${pid} 2>/dev/null && echo alive || echo gone`)).output).toBe("gone\n");
  });

  it("plugs into the SDK's own shellTool and applyPatchTool", async () => {
    const shell = new ShellwrightShell(env);
    const editor = new ShellwrightEditor(env, { safeRoot: dir });
    expect(shellTool({ shell })).toMatchObject({ type: "shell", name: "shell", shell });
    expect(applyPatchTool({ editor })).toMatchObject({ type: "apply_patch", name: "apply_patch", editor });
    expect(await shell.run({ commands: ["echo one", "echo two"], maxOutputLength: 100 })).toEqual({
      output: [
        { stdout: "one\n", stderr: "", outcome: { type: "exit", exitCode: 0 } },
        { stdout: "two\n", stderr: "", outcome: { type: "exit", exitCode: 0 } },
      ],
      maxOutputLength: 100,
      providerData: { working_directory: env.cwd },
    });
    expect(await editor.createFile({ type: "create_file", path: "/etc/shellwright-test", diff: "+x" })).toEqual({
      status: "failed",
      output: expect.stringMatching(/^Write denied: '\/etc\/shellwright-test' is a protected .*Nothing was changed\.$/),
    });
    expect(await editor.deleteFile({ type: "delete_file", path: `${dir}/absent.txt` })).toEqual({
      status: "failed",
      output: `File not found: ${dir}/absent.txt. Nothing was changed.`,
    });
  });

  it("says what to install when @openai/agents is missing", () => {
    const missing = () => loadAgents(missingModule("@openai/agents"));
    expect(missing).toThrow(ShellwrightError);
    expect(missing).toThrow(AGENTS_INSTALL_HINT);
    expect(AGENTS_INSTALL_HINT).toContain("npm install @openai/agents");
  });
});
