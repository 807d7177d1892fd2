/**
 * A tool is one definition: a name, a description written for a model, a zod
 * input schema (also exported as JSON Schema), and a handler over an Environment.
 * Tools never throw at the model: bad arguments and failures come back as a
 * result with an `error` field that says what to do instead.
 */

import { z } from "zod";
import type { Environment } from "../../core/environment.js";
import { redactingOutput, redactorFor, redactResult } from "./redaction.js";
import { DEFAULT_TOOL_SETTINGS, type ToolSettings } from "./tool-settings.js";

/** A JSON-serialisable tool result; failures carry `error`. */
export type ToolResult = { [key: string]: unknown; error?: string };

export interface ToolContext {
  /** What the tool runs on: a Session, a gateway session, any Environment. */
  session: Environment;
  /** Aborted when the caller cancels the tool call; pass it to every `session.execute`. */
  signal?: AbortSignal;
  /**
   * Receives the output of the tool's long commands as it arrives (MCP progress
   * notifications); pass it to `session.execute` as `onOutput`.
   */
  onOutput?: (text: string) => void;
  /** Limits and hooks (validated by `toolSettings()`). @default DEFAULT_TOOL_SETTINGS */
  settings?: ToolSettings;
  /** The model's id for this call; names a saved result file. @default random */
  callId?: string;
}

/** What a handler gets: the caller's context with the settings filled in, so no tool defaults them itself. */
export interface HandlerContext extends ToolContext {
  settings: ToolSettings;
}

/** The declarations a provider takes for the tools it defines itself, as its API spells them. */
export interface NativeDeclarations {
  anthropic?:
    | { type: "bash_20250124"; name: "bash" }
    | { type: "text_editor_20250728"; name: "str_replace_based_edit_tool"; max_characters?: number };
  "openai-responses"?: { type: "shell"; environment: { type: "local" } } | { type: "apply_patch" };
}

export interface ToolDefinition<Schema extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Schema;
  handler(input: z.infer<Schema>, context: HandlerContext): Promise<ToolResult>;
  /**
   * A provider's own declaration of the tool, for a tool the provider defines
   * itself (Anthropic's `bash_20250124`, the Responses API's `shell`):
   * `toolDefinitions({ native: true })` gives this instead of a function.
   */
  readonly native?: NativeDeclarations;
  /**
   * The result for a call that failed before or inside the handler (bad
   * arguments, a thrown error), in the shape the tool's provider gives errors.
   * @default `{ error: message }`
   */
  errorResult?(message: string): ToolResult;
}

export function defineTool<Schema extends z.ZodType>(tool: ToolDefinition<Schema>): ToolDefinition<Schema> {
  return tool;
}

/** The tool's input schema as JSON Schema, for model APIs. */
export function inputJsonSchema(tool: ToolDefinition): Record<string, unknown> {
  // "input": fields with a default are optional to the caller (the model).
  return z.toJSONSchema(tool.inputSchema, { io: "input" }) as Record<string, unknown>;
}

/**
 * Validates the arguments and runs the tool; every failure becomes `{error}`.
 * Secrets are masked in the result and in what `onOutput` receives, unless
 * the settings turn `redactSecrets` off.
 */
export async function runTool(tool: ToolDefinition, args: unknown, context: ToolContext): Promise<ToolResult> {
  const redactor = redactorFor(context);
  if (redactor === undefined) return runRaw(tool, args, context);
  const output = redactingOutput(context.onOutput, redactor);
  try {
    const result = await runRaw(tool, args, { ...context, ...(output.onOutput ? { onOutput: output.onOutput } : {}) });
    return redactResult(result, redactor);
  } finally {
    output.end();
  }
}

/**
 * What is wrong with `args` as `tool`'s arguments, in the words a call gets
 * (for a check made before any call, such as a plan's); empty when nothing is.
 * `unknownKeysOnly` keeps only arguments the tool does not take.
 */
export function argumentProblems(tool: ToolDefinition, args: unknown, unknownKeysOnly = false): string[] {
  const parsed = tool.inputSchema.safeParse(withoutNullArguments(tool.inputSchema, args ?? {}));
  if (parsed.success) return [];
  return parsed.error.issues
    .filter((issue) => !unknownKeysOnly || issue.code === "unrecognized_keys")
    .map((issue) => describeIssue(tool, issue, args));
}

async function runRaw(tool: ToolDefinition, args: unknown, context: ToolContext): Promise<ToolResult> {
  const parsed = tool.inputSchema.safeParse(withoutNullArguments(tool.inputSchema, args ?? {}));
  if (!parsed.success) {
    const { issues } = parsed.error;
    const problems = issues.map((issue) => describeIssue(tool, issue, args)).join("; ");
    const fix = issues.length === 1 ? "fix it" : "fix them";
    return failure(tool, `Invalid arguments for ${tool.name}: ${problems}; ${fix} and call ${tool.name} again.`);
  }
  try {
    return await tool.handler(parsed.data, { ...context, settings: context.settings ?? DEFAULT_TOOL_SETTINGS });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return failure(tool, `${tool.name} failed: ${message}`);
  }
}

const failure = (tool: ToolDefinition, message: string): ToolResult =>
  tool.errorResult?.(message) ?? { error: message };

/**
 * One problem with the arguments, in words a model acts on. An unknown key
 * names the key and lists the keys the tool takes: a misspelt `dry_run` or
 * `pth` must not run the call as if it were absent.
 */
function describeIssue(tool: ToolDefinition, issue: z.core.$ZodIssue, args: unknown): string {
  const where = issue.path.join(".") || "arguments";
  // zod's own wording ("Invalid input: expected string, received undefined") says what went wrong, not what to send.
  switch (issue.code) {
    case "invalid_type": {
      const given = valueAt(args, issue.path);
      if (given === undefined) return `${where} is required (${article(issue.expected)})`;
      return `${where} must be ${article(issue.expected)}, not ${given === null ? "null" : article(kindOf(given))}`;
    }
    case "invalid_value":
      return `${where} must be ${issue.values.length === 1 ? "" : "one of "}${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "too_small":
      if (issue.message.startsWith("Too small"))
        return `${where} ${bound("at least", issue.minimum, issue.origin)}${given(issue, args)}`;
      break;
    case "too_big":
      if (issue.message.startsWith("Too big"))
        return `${where} ${bound("at most", issue.maximum, issue.origin)}${given(issue, args)}`;
      break;
  }
  if (issue.code !== "unrecognized_keys") return `${where}: ${issue.message}`;
  const unknown = issue.keys.map((key) => JSON.stringify(key)).join(", ");
  const noun = issue.keys.length === 1 ? "argument" : "arguments";
  const shape = tool.inputSchema instanceof z.ZodObject ? Object.keys(tool.inputSchema.shape as object) : [];
  const allowed = shape.length > 0 ? ` (${tool.name} takes: ${shape.join(", ")})` : "";
  const prefix = issue.path.length > 0 ? `${where}: ` : "";
  return `${prefix}unknown ${noun} ${unknown} for ${tool.name}${allowed}`;
}

/**
 * OpenAI's strict mode makes every argument required and sends `null` for the
 * ones the model leaves out (the OpenAI Agents SDK, `toolDefinitions({ strict:
 * true })`). A top-level `null` therefore means "not given" and is dropped,
 * unless the tool's own schema gives `null` a meaning (a custom tool's
 * `.nullable()` field keeps it, and so does a required field).
 */
export function withoutNullArguments(schema: z.ZodType, args: unknown): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return args;
  const shape = schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodType>) : undefined;
  let result: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(args)) {
    if (value !== null) continue;
    const field = shape?.[key];
    if (field !== undefined) {
      // A field whose value null is (`.nullable()`) keeps it; a coercing one (z.coerce.string()) does not.
      const asNull = field.safeParse(null);
      if (asNull.success && asNull.data === null) continue;
      // A required field keeps its null, so the model reads "expected string, received null".
      if (!field.safeParse(undefined).success) continue;
    }
    result ??= { ...(args as Record<string, unknown>) };
    delete result[key];
  }
  return result ?? args;
}

function valueAt(args: unknown, path: readonly PropertyKey[]): unknown {
  let value = args;
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function kindOf(value: unknown): string {
  return Array.isArray(value) ? "array" : typeof value;
}

/** "a string", "an integer", "an array". */
function article(kind: string): string {
  return `${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`;
}

/** "must be at least 1", "must not be empty", "must have at most 3 items". */
/** ", got -3": the number the call gave, for a bound it broke. */
function given(issue: z.core.$ZodIssue, args: unknown): string {
  const value = valueAt(args, issue.path);
  return typeof value === "number" ? `, got ${value}` : "";
}

function bound(side: "at least" | "at most", limit: number | bigint, origin: string): string {
  if (origin === "string")
    return side === "at least" && Number(limit) === 1 ? "must not be empty" : `must be ${side} ${limit} characters`;
  if (origin === "array" || origin === "set") return `must have ${side} ${limit} items`;
  return `must be ${side} ${limit}`;
}
