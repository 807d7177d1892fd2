/**
 * Anthropic's text editor tool (`str_replace_based_edit_tool`,
 * `text_editor_20250728`): `view`, `create`, `str_replace` and `insert`, on
 * the file tools' engine: every write is atomic and verified, an edit is
 * written only over the content it was computed from, and paths the write
 * guard protects are refused. Results and errors are text, with the texts
 * Anthropic's documentation gives ("Successfully replaced text at exactly one
 * location.", "Error: No match found for replacement. …").
 */

import { z } from "zod";
import { optionalPositiveInteger } from "../../core/options.js";
import { ConcurrentChangeError, probeForWrite, sha256, writeAtomic } from "../files/atomic-write.js";
import { validateGuardOptions, type WriteGuardOptions } from "../files/path-guard.js";
import { pathSchema } from "../files/write-file.js";
import { decodeText, encodeText, type TextFile } from "../patch/patch-tool.js";
import { defineTool, type HandlerContext, type ToolDefinition, type ToolResult } from "../shared/tool-definition.js";
import { anthropicError } from "./anthropic-error.js";
import { viewPath } from "./text-editor-view.js";

export interface TextEditorToolOptions extends WriteGuardOptions {
  /** `view` shows at most this many characters (declared to Claude as `max_characters`). @default the settings' inlineOutputChars */
  maxCharacters?: number;
}

const inputSchema = z
  .object({
    command: z.enum(["view", "create", "str_replace", "insert"]).describe("The command to run"),
    path: pathSchema.describe("Path of the file or directory; relative paths start at the session's directory"),
    view_range: z
      .tuple([z.number().int(), z.number().int()])
      .optional()
      .describe("view: the first and last line to show, 1-based; -1 as the last shows to the end"),
    file_text: z.string().optional().describe("create: the content of the new file"),
    old_str: z.string().optional().describe("str_replace: the text to replace, which must appear exactly once"),
    new_str: z.string().optional().describe("str_replace: the replacement; insert: the text to insert"),
    insert_line: z.number().int().min(0).optional().describe("insert: the line after which to insert (0: the start)"),
  })
  .strict();

type Input = z.infer<typeof inputSchema>;

export function createTextEditorTool(options: TextEditorToolOptions = {}): ToolDefinition<typeof inputSchema> {
  const { maxCharacters, ...guard } = options;
  validateGuardOptions(guard);
  optionalPositiveInteger("maxCharacters", maxCharacters);
  return defineTool({
    name: "str_replace_based_edit_tool",
    description:
      "View, create and edit text files. view: a file with line numbers (view_range for part of it) or a " +
      "directory's entries. create: a new file (an existing one is not replaced). str_replace: replace old_str, " +
      "which must match exactly once, whitespace included. insert: add new_str after line insert_line.",
    inputSchema,
    native: {
      anthropic: {
        type: "text_editor_20250728",
        name: "str_replace_based_edit_tool",
        ...(maxCharacters === undefined ? {} : { max_characters: maxCharacters }),
      },
    },
    errorResult: anthropicError,
    async handler(input, context): Promise<ToolResult> {
      if (input.command === "view")
        return viewPath(input.path, input.view_range, maxCharacters ?? context.settings.inlineOutputChars, context);
      if (input.command === "create") return create(input, guard, context);
      return edit(input, guard, context);
    },
  });
}

export const anthropicTextEditorTool = createTextEditorTool();

const required = (name: string, command: string): ToolResult =>
  anthropicError(`Parameter \`${name}\` is required for command: ${command}`);

async function create(input: Input, guard: WriteGuardOptions, context: HandlerContext): Promise<ToolResult> {
  if (input.file_text === undefined) return required("file_text", "create");
  const { session, signal } = context;
  const probe = await probeForWrite(session, input.path, { guard, readAll: false, signal });
  if (probe.denied !== undefined) return anthropicError(`Permission denied. Cannot write to file. ${probe.denied}`);
  if (probe.kind !== "new") {
    return anthropicError(`File already exists at: ${input.path}. Cannot overwrite files using command \`create\`.`);
  }
  return write(() => writeAtomic(session, probe.resolved, Buffer.from(input.file_text!, "utf8"), { signal }), {
    content: `File created successfully at: ${input.path}`,
  });
}

/** str_replace and insert: read whole, change, write back only over what was read. */
async function edit(input: Input, guard: WriteGuardOptions, context: HandlerContext): Promise<ToolResult> {
  const lf = (text: string): string => text.replace(/\r\n/g, "\n");
  let change: (text: string) => { text: string } | ToolResult;
  if (input.command === "str_replace") {
    if (input.old_str === undefined) return required("old_str", "str_replace");
    if (input.old_str === "") return anthropicError("Parameter `old_str` is empty for command: str_replace");
    const [oldStr, newStr] = [lf(input.old_str), lf(input.new_str ?? "")];
    change = (text) => {
      const found = text.split(oldStr).length - 1;
      if (found === 0) return anthropicError("No match found for replacement. Please check your text and try again.");
      if (found > 1)
        return anthropicError(
          `Found ${found} matches for replacement text. Please provide more context to make a unique match.`,
        );
      const at = text.indexOf(oldStr);
      return { text: text.slice(0, at) + newStr + text.slice(at + oldStr.length) };
    };
  } else {
    if (input.insert_line === undefined) return required("insert_line", "insert");
    if (input.new_str === undefined) return required("new_str", "insert");
    change = insertion(input.insert_line, lf(input.new_str));
  }

  const { session, signal } = context;
  const probe = await probeForWrite(session, input.path, { guard, readAll: true, signal });
  if (probe.denied !== undefined) return anthropicError(`Permission denied. Cannot write to file. ${probe.denied}`);
  if (probe.kind === "new") return anthropicError("File not found");
  if (probe.kind === "dir") {
    return anthropicError(
      `The path ${input.path} is a directory and only the \`view\` command can be used on directories`,
    );
  }
  if (probe.kind !== "file") return anthropicError(`${input.path} is not a regular file.`);
  const file: TextFile | string = decodeText(probe.existing, input.path);
  if (typeof file === "string") return anthropicError(`${input.path} is not a UTF-8 text file; it cannot be edited.`);
  const changed = change(file.text);
  if (!("text" in changed) || typeof changed.text !== "string") return changed;
  const done =
    input.command === "str_replace"
      ? "Successfully replaced text at exactly one location."
      : `Successfully inserted text after line ${input.insert_line}.`;
  return write(
    () =>
      writeAtomic(session, probe.resolved, encodeText(file, changed.text as string), {
        mode: probe.mode,
        expectedSha256: sha256(probe.existing),
        signal,
      }),
    { content: done },
  );
}

/** new_str as whole lines after line `line` (0: before the first), the file's last newline kept as it was. */
function insertion(line: number, newStr: string): (text: string) => { text: string } | ToolResult {
  return (text) => {
    const ends = text.endsWith("\n");
    const lines = text === "" ? [] : (ends ? text.slice(0, -1) : text).split("\n");
    if (line > lines.length) {
      return anthropicError(
        `Invalid \`insert_line\` parameter: ${line}. It should be within the range of lines of the file: [0, ${lines.length}]`,
      );
    }
    const added = (newStr.endsWith("\n") ? newStr.slice(0, -1) : newStr).split("\n");
    const result = [...lines.slice(0, line), ...added, ...lines.slice(line)].join("\n");
    return { text: ends || lines.length === 0 ? `${result}\n` : result };
  };
}

async function write(run: () => Promise<unknown>, done: ToolResult): Promise<ToolResult> {
  try {
    await run();
    return done;
  } catch (error) {
    if (error instanceof ConcurrentChangeError) return anthropicError(error.message);
    const message = error instanceof Error ? error.message : String(error);
    if (/permission denied|read-only file system/i.test(message))
      return anthropicError(`Permission denied. Cannot write to file. ${message}`);
    throw error;
  }
}
