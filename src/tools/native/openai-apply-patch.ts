/**
 * OpenAI's `apply_patch` tool: one file operation per call, as the Responses
 * API's `apply_patch_call` carries it (its `operation`'s type, path and diff), with
 * its answer in the shape of `apply_patch_call_output`: `status` completed or
 * failed, and `output`, a line saying what was done or why nothing was.
 */

import { z } from "zod";
import { pathSchema } from "../files/write-file.js";
import { validateGuardOptions, type WriteGuardOptions } from "../files/path-guard.js";
import { defineTool, type ToolDefinition, type ToolResult } from "../shared/tool-definition.js";
import { applyPatchOperation, type PatchOperation } from "./patch-operation.js";

export type ApplyPatchToolOptions = WriteGuardOptions;

// The fields of an apply_patch_call's `operation`, at the top: strict callers' nulls are read as "not given" there.
const inputSchema = z
  .object({
    type: z
      .enum(["create_file", "update_file", "delete_file"])
      .describe("create_file: a new file; update_file: change an existing one; delete_file: remove one"),
    path: pathSchema.describe("The file, relative to the session's working directory or absolute"),
    diff: z
      .string()
      .optional()
      .describe(
        "create_file: the content, every line starting with +. update_file: V4A hunks, each introduced by @@ " +
          "(optionally followed by a line to find first, such as a function's def), then context lines starting " +
          "with a space, removed lines with -, added lines with +. Not for delete_file.",
      ),
    move_to: z.string().optional().describe("update_file only: a new path to move the updated file to"),
  })
  .strict();

/** A failed apply_patch_call_output, with `error` for the doors that read that. */
export function patchFailure(message: string): ToolResult {
  return { status: "failed", output: message, error: message };
}

export function createApplyPatchTool(options: ApplyPatchToolOptions = {}): ToolDefinition<typeof inputSchema> {
  validateGuardOptions(options);
  return defineTool({
    name: "apply_patch",
    description:
      "Creates, updates or deletes one file with a V4A diff. update_file hunks are found by their context lines and " +
      "@@ lines, not by line numbers; a hunk that does not match changes nothing and the answer names it. " +
      "Line endings and a byte-order mark are kept; create_file does not replace an existing file.",
    inputSchema,
    native: { "openai-responses": { type: "apply_patch" } },
    errorResult: patchFailure,
    async handler({ type, path, diff, move_to }, { session, signal }): Promise<ToolResult> {
      if (type !== "delete_file" && diff === undefined) return patchFailure(`${type} needs a diff.`);
      if (type === "delete_file" && diff !== undefined && diff.trim() !== "")
        return patchFailure("delete_file takes no diff.");
      if (move_to !== undefined && type !== "update_file") return patchFailure("move_to is for update_file only.");
      const op: PatchOperation =
        type === "delete_file"
          ? { type, path }
          : type === "create_file"
            ? { type, path, diff: diff! }
            : { type, path, diff: diff!, move_to };
      const outcome = await applyPatchOperation(session, op, options, signal);
      return outcome.status === "completed" ? { ...outcome } : patchFailure(outcome.output);
    },
  });
}

export const openaiApplyPatchTool = createApplyPatchTool();
