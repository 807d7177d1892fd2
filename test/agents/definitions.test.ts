/** What the model sees (pinned by snapshot) and how its calls are run, over a real local session. */

import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleToolCall, toolDefinitions } from "../../src/agents/definitions.js";
import { createEnvironment, InvalidOptionError, type Environment } from "../../src/index.js";
import { TOOLS } from "../../src/tools/registry.js";
import { defineTool } from "../../src/tools/shared/tool-definition.js";
import { repeatTool, testTools } from "../fixtures/agent-tools.mjs";

describe("toolDefinitions", () => {
  it("pins the OpenAI shape", () => {
    expect(toolDefinitions({ format: "openai", tools: testTools })).toMatchSnapshot();
  });

  it("pins the Anthropic shape", () => {
    expect(toolDefinitions({ format: "anthropic", tools: testTools })).toMatchSnapshot();
  });

  it("pins the JSON Schema shape", () => {
    expect(toolDefinitions({ format: "json-schema", tools: testTools })).toMatchSnapshot();
  });

  it("shows a field with a default as optional, with its default", () => {
    const [repeat] = toolDefinitions({ format: "anthropic", tools: [repeatTool] });
    expect(repeat!.input_schema).toMatchObject({
      required: ["text"],
      properties: { times: { type: "integer", default: 2 } },
    });
  });

  it("pins what the model sees of the Shellwright tools", () => {
    expect(toolDefinitions({ format: "anthropic" })).toMatchSnapshot();
  });

  it("defaults to the Shellwright tools", () => {
    const names = toolDefinitions({ format: "anthropic" }).map((definition) => definition.name);
    expect(names).toEqual(TOOLS.map((tool) => tool.name));
  });

  it("rejects a bad format, option or tool list, naming it", () => {
    expect(() => toolDefinitions({ format: "gemini" as "openai" })).toThrow(
      new InvalidOptionError("format", 'format must be one of openai, anthropic, json-schema, got "gemini"'),
    );
    expect(() => toolDefinitions({ format: "openai", strict: true } as never)).toThrow(
      /Unknown toolDefinitions option "strict"; known options: format, tools/,
    );
    expect(() => toolDefinitions({ format: "openai", tools: [repeatTool, repeatTool] })).toThrow(
      /tools has two tools named "repeat"/,
    );
    expect(() => toolDefinitions({ format: "openai", tools: [{ name: "x" }] as never })).toThrow(
      /tools\[0\] must be a tool definition/,
    );
    const badName = defineTool({ ...repeatTool, name: "read file" });
    expect(() => toolDefinitions({ format: "openai", tools: [badName] })).toThrow(
      /tools\[0\]\.name must be 1-64 letters, digits, _ or -, got "read file"/,
    );
    const notAnObject = defineTool({
      name: "scalar",
      description: "d",
      inputSchema: z.string(),
      handler: async () => ({}),
    });
    expect(() => toolDefinitions({ format: "anthropic", tools: [notAnObject] })).toThrow(
      /tool "scalar" must take an object/,
    );
  });
});

describe("handleToolCall", () => {
  let session: Environment;
  beforeAll(async () => {
    session = await createEnvironment();
  });
  afterAll(async () => {
    await session.close();
  });

  it("runs a call with parsed arguments or the JSON text a provider sends", async () => {
    expect(await handleToolCall(session, "repeat", { text: "ab", times: 3 }, { tools: testTools })).toEqual({
      text: "ababab",
    });
    expect(await handleToolCall(session, "repeat", '{"text":"x"}', { tools: testTools })).toEqual({ text: "xx" });
    expect(
      await handleToolCall(session, "run", JSON.stringify({ command: "export HTC=1; echo $((40+2))" }), {
        tools: testTools,
      }),
    ).toMatchObject({
      output: "42\n",
      exit_code: 0,
    });
    expect(await handleToolCall(session, "run", { command: "echo $HTC" }, { tools: testTools })).toMatchObject({
      output: "1\n",
    });
  });

  it("answers the model's mistakes with an error it can act on", async () => {
    expect(await handleToolCall(session, "rm_rf", {}, { tools: testTools })).toEqual({
      error: 'Unknown tool "rm_rf". Available tools: run, repeat, broken.',
    });
    const badJson = await handleToolCall(session, "repeat", '{"text": ', { tools: testTools });
    expect(badJson.error).toMatch(/^The arguments for repeat are not valid JSON \(.+\)\. Send one JSON object\.$/);
    const badArgs = await handleToolCall(session, "repeat", { times: 2 }, { tools: testTools });
    expect(badArgs.error).toMatch(/^Invalid arguments for repeat: text: /);
    expect(await handleToolCall(session, "broken", {}, { tools: testTools })).toEqual({
      error: "broken failed: the disk is on fire",
    });
  });

  it("streams the command's output to onOutput", async () => {
    const seen: string[] = [];
    const result = await handleToolCall(
      session,
      "run",
      { command: "echo one; echo two" },
      { tools: testTools, onOutput: (text) => seen.push(text) },
    );
    expect(result).toMatchObject({ output: "one\ntwo\n" });
    expect(seen.join("")).toBe("one\ntwo\n");
  });

  it("interrupts the command when the signal aborts; the session stays usable", async () => {
    const controller = new AbortController();
    const result = await handleToolCall(
      session,
      "run",
      { command: "echo started; sleep 300" },
      {
        tools: testTools,
        signal: controller.signal,
        onOutput: (text) => text.includes("started") && controller.abort(),
      },
    );
    expect(result).toMatchObject({ exit_code: 130, interrupted: true });
    expect(await handleToolCall(session, "run", { command: "echo after" }, { tools: testTools })).toMatchObject({
      output: "after\n",
      exit_code: 0,
    });
  });

  it("rejects an unknown option, naming it", async () => {
    await expect(handleToolCall(session, "run", {}, { tools: testTools, timeout: 5 } as never)).rejects.toThrow(
      /Unknown handleToolCall option "timeout"/,
    );
  });
});
