/** What the model sees (pinned by snapshot) and how its calls are run, over a real local session. */

import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleToolCall, toolDefinitions } from "../../src/agents/definitions.js";
import { createEnvironment, InvalidOptionError, type Environment } from "../../src/index.js";
import { TOOLS } from "../../src/tools/registry.js";
import { UNIFIED_EXEC_TOOLS } from "../../src/tools/unified-exec/unified-exec.js";
import { ANTHROPIC_NATIVE_TOOLS, OPENAI_NATIVE_TOOLS } from "../../src/tools/native/native-tools.js";
import { defineTool } from "../../src/tools/shared/tool-definition.js";
import { repeatTool, testTools } from "../fixtures/agent-tools.mjs";

describe("toolDefinitions", () => {
  it("pins the OpenAI shape", () => {
    expect(toolDefinitions({ format: "openai", tools: testTools })).toMatchSnapshot();
  });

  it("pins the Anthropic shape", () => {
    expect(toolDefinitions({ format: "anthropic", tools: testTools })).toMatchSnapshot();
  });

  it("pins the OpenAI Responses shape: the function's fields at the top level", () => {
    expect(toolDefinitions({ format: "openai-responses", tools: testTools })).toMatchSnapshot();
  });

  it("pins the strict shapes of the Shellwright tools", () => {
    expect(toolDefinitions({ format: "openai", strict: true })).toMatchSnapshot();
  });

  it("meets OpenAI's strict rules for every tool and every format when strict", () => {
    for (const format of ["openai", "openai-responses", "anthropic", "json-schema"] as const) {
      const tools = [...TOOLS, ...UNIFIED_EXEC_TOOLS, ...OPENAI_NATIVE_TOOLS, ...ANTHROPIC_NATIVE_TOOLS];
      for (const definition of toolDefinitions({ format, strict: true, tools })) {
        const schema =
          "function" in definition
            ? definition.function.parameters
            : "parameters" in definition
              ? definition.parameters
              : "input_schema" in definition
                ? definition.input_schema
                : definition.inputSchema;
        expect(strictProblems(schema), `${format} ${JSON.stringify(definition).slice(0, 60)}`).toEqual([]);
        if (format === "openai") expect(definition).toMatchObject({ function: { strict: true } });
        else if (format !== "json-schema") expect(definition).toMatchObject({ strict: true });
        if (format !== "json-schema") expect(schema).not.toHaveProperty("$schema");
      }
    }
    expect(toolDefinitions({ format: "openai-responses" })[0]).toMatchObject({ type: "function", strict: false });
  });

  it("keeps each default for the model in the description when strict", () => {
    const [repeat] = toolDefinitions({ format: "openai", tools: [repeatTool], strict: true });
    expect(repeat!.function.parameters).toEqual({
      type: "object",
      properties: {
        text: { type: "string", description: "The text to repeat." },
        times: { type: ["integer", "null"], description: "How many times. Default: 2.", minimum: 1, maximum: 5 },
      },
      required: ["text", "times"],
      additionalProperties: false,
    });
  });

  it("keeps every description within 1024 characters (OpenAI's limit)", () => {
    const tools = [...TOOLS, ...UNIFIED_EXEC_TOOLS, ...OPENAI_NATIVE_TOOLS, ...ANTHROPIC_NATIVE_TOOLS];
    for (const definition of toolDefinitions({ format: "json-schema", tools })) {
      expect(definition.description.length, definition.name).toBeLessThanOrEqual(1024);
    }
  });

  it("pins what the model sees of the native tool sets, as functions", () => {
    expect(
      toolDefinitions({ format: "json-schema", tools: [...OPENAI_NATIVE_TOOLS, ...ANTHROPIC_NATIVE_TOOLS] }),
    ).toMatchSnapshot();
  });

  it("declares a provider's own tools its way with native: true, everything else as functions", () => {
    const tools = [...OPENAI_NATIVE_TOOLS, ...ANTHROPIC_NATIVE_TOOLS, TOOLS[0]!];
    expect(toolDefinitions({ format: "anthropic", tools, native: true })).toEqual([
      expect.objectContaining({ name: "shell", input_schema: expect.objectContaining({ type: "object" }) }),
      expect.objectContaining({ name: "apply_patch" }),
      { type: "bash_20250124", name: "bash" },
      { type: "text_editor_20250728", name: "str_replace_based_edit_tool" },
      expect.objectContaining({ name: "terminal" }),
    ]);
    expect(toolDefinitions({ format: "openai-responses", tools, native: true, strict: true })).toEqual([
      { type: "shell", environment: { type: "local" } },
      { type: "apply_patch" },
      expect.objectContaining({ type: "function", name: "bash", strict: true }),
      expect.objectContaining({ type: "function", name: "str_replace_based_edit_tool", strict: true }),
      expect.objectContaining({ type: "function", name: "terminal" }),
    ]);
    // Chat Completions has no native tools: every tool is a function there.
    expect(toolDefinitions({ format: "openai", tools, native: true }).every((d) => d.type === "function")).toBe(true);
    // Without native, the same tools are functions everywhere.
    expect(toolDefinitions({ format: "anthropic", tools }).every((d) => "input_schema" in d)).toBe(true);
    expect(() => toolDefinitions({ format: "anthropic", native: "yes" as never })).toThrow(
      new InvalidOptionError("native", 'native must be true or false, got "yes"'),
    );
  });

  it("gives Anthropic an object input_schema", () => {
    for (const definition of toolDefinitions({ format: "anthropic" })) {
      expect(definition.input_schema.type).toBe("object");
    }
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
      new InvalidOptionError(
        "format",
        'format must be one of openai, openai-responses, anthropic, json-schema, got "gemini"',
      ),
    );
    expect(() => toolDefinitions({ format: "openai", strictMode: true } as never)).toThrow(
      /Unknown toolDefinitions option "strictMode"; known options: format, tools, strict, native/,
    );
    expect(() => toolDefinitions({ format: "openai", strict: "yes" as never })).toThrow(
      new InvalidOptionError("strict", 'strict must be true or false, got "yes"'),
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
    expect(badArgs.error).toMatch(
      /^Invalid arguments for repeat: text is required \(a string\); fix it and call repeat again\.$/,
    );
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

  it("reads null as 'not given' for every optional argument of every tool, as strict callers send it", async () => {
    const nulls = (name: string): Record<string, unknown> => {
      const definition = toolDefinitions({ format: "json-schema", strict: true }).find((d) => d.name === name)!;
      return Object.fromEntries(Object.keys(definition.inputSchema.properties ?? {}).map((key) => [key, null]));
    };
    const call = (name: string, args: Record<string, unknown>) =>
      handleToolCall(session, name, { ...nulls(name), ...args });
    expect(await call("terminal", { command: "echo hi" })).toEqual({ output: "hi\n", exit_code: 0 });
    expect(await call("process", { action: "list" })).toEqual({ processes: [] });
    await call("write_file", { path: "/tmp/shellwright-null-args.txt", content: "one\ntwo\n" });
    expect(await call("read_file", { path: "/tmp/shellwright-null-args.txt" })).toMatchObject({
      content: "1|one\n2|two",
    });
    expect(await call("search_files", { pattern: "two", path: "/tmp/shellwright-null-args.txt" })).toMatchObject({
      total_count: 1,
    });
    expect(
      await call("patch", { path: "/tmp/shellwright-null-args.txt", old_string: "two", new_string: "three" }),
    ).not.toHaveProperty("error");
    expect(await call("terminal", { command: null })).toEqual({
      error: "Invalid arguments for terminal: command must be a string, not null; fix it and call terminal again.",
    });
  });

  it("rejects an unknown option, naming it", async () => {
    await expect(handleToolCall(session, "run", {}, { tools: testTools, timeout: 5 } as never)).rejects.toThrow(
      /Unknown handleToolCall option "timeout"/,
    );
  });
});

/** What breaks OpenAI's strict rules in a schema: open objects, optional properties, refused keywords. */
function strictProblems(node: unknown, path = "$"): string[] {
  if (typeof node !== "object" || node === null) return [];
  if (Array.isArray(node)) return node.flatMap((item, index) => strictProblems(item, `${path}[${index}]`));
  const schema = node as Record<string, unknown>;
  const problems: string[] = [];
  for (const keyword of ["default", "minLength", "maxLength"]) {
    if (keyword in schema) problems.push(`${path} has ${keyword}`);
  }
  if (schema.type === "object") {
    if (schema.additionalProperties !== false) problems.push(`${path} is not closed`);
    const keys = Object.keys((schema.properties ?? {}) as object);
    if (JSON.stringify(schema.required ?? []) !== JSON.stringify(keys))
      problems.push(`${path} has optional properties`);
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties") {
      for (const [name, child] of Object.entries(value as object))
        problems.push(...strictProblems(child, `${path}.${name}`));
    } else if (typeof value === "object") problems.push(...strictProblems(value, `${path}.${key}`));
  }
  return problems;
}
