/**
 * The tools in each model provider's function-calling shape, and one function
 * that runs the call a model makes.
 */

import type { Environment } from "../core/environment.js";
import { InvalidOptionError } from "../core/errors.js";
import { describe, plainObject, rejectUnknown } from "../core/options.js";
import { toolSettings, type ToolSettingsInput } from "../tools/shared/tool-settings.js";
import {
  inputJsonSchema,
  type NativeDeclarations,
  type ToolDefinition,
  type ToolResult,
} from "../tools/shared/tool-definition.js";
import { callTool, findTool, unknownToolMessage } from "../tools/registry.js";
import type { RegistryToolName, ToolResultOf } from "../tools/tool-results.js";
import { strictSchema } from "./strict-schema.js";
import { toolList } from "./tool-list.js";

export const TOOL_FORMATS = ["openai", "openai-responses", "anthropic", "json-schema"] as const;
export type ToolFormat = (typeof TOOL_FORMATS)[number];

export type JsonSchemaObject = Record<string, unknown>;

/** A tool's input schema: always an object at the top (the model's arguments are one JSON object). */
export interface ObjectJsonSchema {
  type: "object";
  properties?: Record<string, JsonSchemaObject>;
  required?: string[];
  [keyword: string]: unknown;
}

/** OpenAI Chat Completions `tools` entry (also accepted by OpenAI-compatible servers). */
export interface OpenAIToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: ObjectJsonSchema; strict?: boolean };
}

/** OpenAI Responses API `tools` entry: the function's fields at the top level. */
export interface OpenAIResponsesToolDefinition {
  type: "function";
  name: string;
  description: string;
  parameters: ObjectJsonSchema;
  strict: boolean;
}

/** Anthropic Messages API `tools` entry. */
export interface AnthropicToolDefinition {
  name: string;
  description: string;
  input_schema: ObjectJsonSchema;
  strict?: boolean;
}

/** Provider-neutral: the name, the description and the JSON Schema (draft 2020-12) of the input. */
export interface JsonSchemaToolDefinition {
  name: string;
  description: string;
  inputSchema: ObjectJsonSchema;
}

export interface ToolDefinitionsOptions<Format extends ToolFormat = ToolFormat> {
  format: Format;
  /** @default the Shellwright tools */
  tools?: readonly ToolDefinition[];
  /**
   * Schemas that meet OpenAI's strict mode (every object closed, every property
   * required, optional ones nullable; the tools read `null` as "not given"),
   * and `strict: true` on each OpenAI and Anthropic definition.
   * @default false
   */
  strict?: boolean;
  /**
   * A tool the provider defines itself (the native tool sets: Anthropic's
   * `bash_20250124`, the Responses API's `shell`) is declared the provider's
   * way, `{ type: "bash_20250124", name: "bash" }`, instead of as a function.
   * @default false
   */
  native?: boolean;
}

/** A provider's own declaration of a tool it defines (ToolDefinition.native). */
export type NativeToolDeclaration = NonNullable<NativeDeclarations[keyof NativeDeclarations]>;

type NativeFor<Format extends ToolFormat> = Format extends keyof NativeDeclarations
  ? NonNullable<NativeDeclarations[Format]>
  : never;

type DefinitionFor<Format extends ToolFormat> = Format extends "openai"
  ? OpenAIToolDefinition
  : Format extends "openai-responses"
    ? OpenAIResponsesToolDefinition
    : Format extends "anthropic"
      ? AnthropicToolDefinition
      : JsonSchemaToolDefinition;

export function toolDefinitions<Format extends ToolFormat>(
  options: ToolDefinitionsOptions<Format> & { native: true },
): (DefinitionFor<Format> | NativeFor<Format>)[];
export function toolDefinitions<Format extends ToolFormat>(
  options: ToolDefinitionsOptions<Format>,
): DefinitionFor<Format>[];
export function toolDefinitions<Format extends ToolFormat>(
  options: ToolDefinitionsOptions<Format>,
): (DefinitionFor<Format> | NativeFor<Format>)[] {
  const raw = plainObject("options", options);
  rejectUnknown("toolDefinitions", raw, ["format", "tools", "strict", "native"]);
  const format = raw.format;
  if (!(TOOL_FORMATS as readonly unknown[]).includes(format)) {
    throw new InvalidOptionError("format", `format must be one of ${TOOL_FORMATS.join(", ")}, got ${describe(format)}`);
  }
  if (raw.strict !== undefined && typeof raw.strict !== "boolean") {
    throw new InvalidOptionError("strict", `strict must be true or false, got ${describe(raw.strict)}`);
  }
  const strict = raw.strict === true;
  if (raw.native !== undefined && typeof raw.native !== "boolean") {
    throw new InvalidOptionError("native", `native must be true or false, got ${describe(raw.native)}`);
  }
  return toolList(options.tools).map((tool) => {
    const declared = raw.native === true ? tool.native?.[format as keyof NativeDeclarations] : undefined;
    return declared === undefined ? definition(tool, format as Format, strict) : ({ ...declared } as NativeFor<Format>);
  });
}

function definition<Format extends ToolFormat>(
  tool: ToolDefinition,
  format: Format,
  strict: boolean,
): DefinitionFor<Format> {
  const { name, description } = tool;
  const schema = strict ? (strictSchema(objectSchema(tool)) as ObjectJsonSchema) : objectSchema(tool);
  const parameters = withoutDialect(schema);
  const strictFlag = strict ? { strict: true } : {};
  let result: DefinitionFor<ToolFormat>;
  if (format === "json-schema") result = { name, description, inputSchema: schema };
  else if (format === "openai")
    result = { type: "function", function: { name, description, parameters, ...strictFlag } };
  else if (format === "openai-responses") result = { type: "function", name, description, parameters, strict };
  else result = { name, description, input_schema: parameters, ...strictFlag };
  return result as DefinitionFor<Format>;
}

/** Every provider wants an object schema at the top: the model's arguments are one JSON object. */
export function objectSchema(tool: ToolDefinition): ObjectJsonSchema {
  const schema = inputJsonSchema(tool);
  if (schema.type !== "object") {
    throw new InvalidOptionError(
      "tools",
      `tool ${describe(tool.name)} must take an object (a zod z.object schema), its input schema has type ${describe(schema.type)}`,
    );
  }
  return schema as ObjectJsonSchema;
}

/** The schema body without its `$schema` dialect line, which providers and some MCP clients reject. */
export function withoutDialect(schema: ObjectJsonSchema): ObjectJsonSchema {
  const body = { ...schema };
  delete body.$schema;
  return body;
}

export interface HandleToolCallOptions {
  /** @default the Shellwright tools */
  tools?: readonly ToolDefinition[];
  /** Aborting interrupts the tool's running command (exit code 130). */
  signal?: AbortSignal;
  /** The output of the tool's long commands as it arrives. */
  onOutput?: (text: string) => void;
  /** Limits and hooks (output limits, the approval hook, result persistence). @default DEFAULT_TOOL_SETTINGS */
  settings?: ToolSettingsInput;
  /** The provider's id for this call (OpenAI `tool_call.id`, Anthropic `tool_use.id`); names a saved result file. @default random */
  callId?: string;
}

/**
 * Runs one tool call a model made. `args` may be the parsed object or the
 * JSON text some providers send (OpenAI's `function.arguments`). Never throws
 * for the model's mistakes: an unknown tool, bad JSON or bad arguments come
 * back as `{error}` that tells the model what to do. Called with the name of
 * a registry tool and no `tools` list, the result has that tool's type
 * (`ToolResults`); a name the model made up gets `ToolResult`.
 */
export async function handleToolCall<Name extends RegistryToolName>(
  session: Environment,
  name: Name,
  args: unknown,
  options?: HandleToolCallOptions & { tools?: undefined },
): Promise<ToolResultOf<Name>>;
export async function handleToolCall(
  session: Environment,
  name: string,
  args: unknown,
  options?: HandleToolCallOptions,
): Promise<ToolResult>;
export async function handleToolCall(
  session: Environment,
  name: string,
  args: unknown,
  options: HandleToolCallOptions = {},
): Promise<ToolResult> {
  const raw = plainObject("options", options);
  rejectUnknown("handleToolCall", raw, ["tools", "signal", "onOutput", "settings", "callId"]);
  const tools = toolList(options.tools);
  const settings = options.settings === undefined ? undefined : toolSettings(options.settings);
  if (options.callId !== undefined && typeof options.callId !== "string") {
    throw new InvalidOptionError("callId", `callId must be a string, got ${describe(options.callId)}`);
  }
  const tool = findTool(name, tools);
  if (tool === undefined) return { error: unknownToolMessage(name, tools) };
  let input = args;
  if (typeof args === "string") {
    try {
      input = args.trim() === "" ? {} : (JSON.parse(args) as unknown);
    } catch (error) {
      return {
        error: `The arguments for ${tool.name} are not valid JSON (${(error as Error).message}). Send one JSON object.`,
      };
    }
  }
  return callTool(tool, input, {
    session,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.onOutput === undefined ? {} : { onOutput: options.onOutput }),
    ...(settings === undefined ? {} : { settings }),
    ...(options.callId === undefined ? {} : { callId: options.callId }),
  });
}
