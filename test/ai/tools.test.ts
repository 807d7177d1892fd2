/**
 * The tools in the AI SDK's tool() shape, run by the AI SDK's own agent loop
 * (generateText with its mock model) over a real local session.
 */

import { generateText, isStepCount, type ToolSet } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxSession, shellwrightTools } from "../../src/ai/index.js";
import { toolDefinitions } from "../../src/agents/definitions.js";
import { ANTHROPIC_NATIVE_TOOLS, createEnvironment, OPENAI_NATIVE_TOOLS, type Environment } from "../../src/index.js";
import { testTools } from "../fixtures/agent-tools.mjs";
import { noStaticHelper, skipAllUnless } from "../helpers/native-helper.js";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A model that makes the given tool calls, one step each, then answers "done". */
function scriptedModel(calls: { toolName: string; input: unknown }[]): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doGenerate: [
      ...calls.map((call, index) => ({
        content: [
          {
            type: "tool-call" as const,
            toolCallId: `call-${index}`,
            toolName: call.toolName,
            input: JSON.stringify(call.input),
          },
        ],
        finishReason: { unified: "tool-calls" as const, raw: undefined },
        usage,
        warnings: [],
      })),
      {
        content: [{ type: "text" as const, text: "done" }],
        finishReason: { unified: "stop" as const, raw: undefined },
        usage,
        warnings: [],
      },
    ],
  });
}

describe("shellwrightTools", () => {
  let session: Environment;
  let tools: ToolSet;
  beforeAll(async () => {
    session = await createEnvironment();
    tools = shellwrightTools(session, { tools: testTools });
  });
  afterAll(async () => {
    await session.close();
  });

  it("offers each tool with the same schema the other doors show", () => {
    expect(Object.keys(tools)).toEqual(["run", "repeat", "broken"]);
    for (const definition of toolDefinitions({ format: "anthropic", tools: testTools })) {
      const aiTool = tools[definition.name]!;
      expect(aiTool.description).toBe(definition.description);
      expect((aiTool.inputSchema as { jsonSchema: unknown }).jsonSchema).toEqual(definition.input_schema);
    }
  });

  it("runs in generateText's loop: results, failures and session state reach the model", async () => {
    const model = scriptedModel([
      { toolName: "run", input: { command: "export AI_LOOP=yes; echo first" } },
      { toolName: "run", input: { command: "echo $AI_LOOP" } },
      { toolName: "broken", input: {} },
      { toolName: "repeat", input: { text: "x", times: 99 } },
    ]);
    const result = await generateText({ model, tools, prompt: "go", stopWhen: isStepCount(10) });
    expect(result.text).toBe("done");
    const outputs = result.steps.flatMap((step) => step.toolResults.map((toolResult) => toolResult.output));
    expect(outputs[0]).toMatchObject({ output: "first\n", exit_code: 0 });
    expect(outputs[1]).toMatchObject({ output: "yes\n", exit_code: 0 });
    expect(outputs[2]).toEqual({ error: "broken failed: the disk is on fire" });
    expect((outputs[3] as { error: string }).error).toMatch(
      /^Invalid arguments for repeat: times must be at most \d+, got 99; fix it/,
    );
    // The model's last prompt carries the tool results it is answering.
    const lastPrompt = model.doGenerateCalls.at(-1)!.prompt;
    const sent = lastPrompt
      .flatMap((message) => (message.role === "tool" ? message.content : []))
      .map((part) => (part as { output: unknown }).output);
    expect(sent).toContainEqual({ type: "json", value: expect.objectContaining({ output: "yes\n" }) });
    expect(sent).toContainEqual({ type: "json", value: { error: "broken failed: the disk is on fire" } });
  });

  it("runs the native tool sets as function tools, each answering in its provider's shape", async () => {
    const native = shellwrightTools(session, { tools: [...OPENAI_NATIVE_TOOLS, ...ANTHROPIC_NATIVE_TOOLS] });
    expect(Object.keys(native)).toEqual(["shell", "apply_patch", "bash", "str_replace_based_edit_tool"]);
    const [home, dir] = [session.cwd, (await session.execute("mktemp -d")).output.trim()];
    const model = scriptedModel([
      { toolName: "bash", input: { command: `cd ${dir} && export NATIVE=yes` } },
      { toolName: "apply_patch", input: { type: "create_file", path: "n.txt", diff: "+one" } },
      { toolName: "str_replace_based_edit_tool", input: { command: "view", path: "n.txt" } },
      { toolName: "shell", input: { commands: ["echo $NATIVE; cat n.txt"] } },
      { toolName: "str_replace_based_edit_tool", input: { command: "insert", path: "n.txt" } },
    ]);
    const result = await generateText({ model, tools: native, prompt: "go", stopWhen: isStepCount(10) });
    await session.execute(`cd ${home} && rm -rf ${dir}`);
    expect(result.steps.flatMap((step) => step.toolResults.map((toolResult) => toolResult.output))).toEqual([
      { content: "", exit_code: 0 },
      { status: "completed", output: "Created n.txt" },
      { content: "1: one" },
      { output: [{ stdout: "yes\none", stderr: "", outcome: { type: "exit", exit_code: 0 } }] },
      { error: "Error: Parameter `insert_line` is required for command: insert" },
    ]);
  });

  it("interrupts the command when the AI SDK aborts the call", async () => {
    const controller = new AbortController();
    const execute = tools.run!.execute!;
    const pending = execute(
      { command: "echo started; sleep 300" },
      { toolCallId: "c1", messages: [], abortSignal: controller.signal, context: {} },
    );
    setTimeout(() => controller.abort(), 200);
    expect(await pending).toMatchObject({ exit_code: 130, interrupted: true });
  });

  it("works beside the sandbox adapter on the same session", async () => {
    const sandbox = createSandboxSession(session);
    const model = scriptedModel([{ toolName: "run", input: { command: "cat shared-note.txt" } }]);
    await sandbox.writeTextFile({ path: "shared-note.txt", content: "written by the sandbox\n" });
    const result = await generateText({
      model,
      tools,
      prompt: "read it",
      stopWhen: isStepCount(3),
      experimental_sandbox: sandbox,
    });
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({ output: "written by the sandbox\n" });
    expect(await sandbox.deleteFile({ path: "shared-note.txt" })).toBe(true);
  });
});

describe("shellwrightTools: pty fields", () => {
  skipAllUnless(noStaticHelper);
  let session: Environment;
  afterAll(async () => {
    await session?.close();
  });

  it("carries pty, keys and screen through the AI SDK tools", async () => {
    session = await createEnvironment();
    const tools = shellwrightTools(session);
    const options = { toolCallId: "c", messages: [], context: {} };
    const started = (await tools.terminal!.execute!(
      { command: "PS1='$ ' exec bash --norc -i", background: true, pty: true, cols: 70, rows: 12 },
      { ...options, toolCallId: "c1" },
    )) as { session_id: string };
    const id = started.session_id;
    const process = tools.process!.execute!;
    expect(await process({ action: "wait", session_id: id, pattern: "\\$ $", timeout: 30 }, options)).toMatchObject({
      status: "matched",
    });
    await process({ action: "keys", session_id: id, keys: ["echo AI-$((6*7))", "Enter"] }, options);
    expect(await process({ action: "wait", session_id: id, pattern: "AI-42", timeout: 30 }, options)).toMatchObject({
      status: "matched",
    });
    const shot = (await process({ action: "screen", session_id: id }, options)) as { screen: string; cols: number };
    expect(shot.cols).toBe(70);
    expect(shot.screen.split("\n")).toContain("AI-42");
    await process({ action: "kill", session_id: id }, options);
  });
});
