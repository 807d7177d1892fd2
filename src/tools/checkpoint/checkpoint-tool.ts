/**
 * `checkpoint`: a model's undo over the session's checkpoints
 * (docs/branching.md): save where it is before a risky step, list what it
 * saved, go back to one, let one go. An optional tool set, not in TOOLS: a
 * model that can roll back also throws away its work (and ends its
 * background processes), so a caller opts in (`CHECKPOINT_TOOLS`, or
 * `--tools shellwright,checkpoint`).
 */

import { z } from "zod";
import type { Checkpoint } from "../../core/checkpoint.js";
import type { Environment } from "../../core/environment.js";
import { defineTool, type ToolResult } from "../shared/tool-definition.js";

/** The longest label a model may give a checkpoint (it comes back in every listing). */
const MAX_LABEL_CHARS = 200;

/** The labels the model gave, per session; the checkpoints themselves live in the session. */
const labels = new WeakMap<Environment, Map<string, string>>();

const checkpointSchema = z
  .object({
    action: z
      .enum(["create", "list", "rollback", "release"])
      .describe(
        "create: save the session's shell state (cwd, variables, functions) now, and its workspace files where it " +
          "has a workspace (the result's `holds` says which); list: the saved checkpoints, oldest first; rollback: " +
          "return to checkpoint `id` (background processes are ended); release: delete checkpoint `id`",
      ),
    id: z
      .string()
      .regex(/^cp-[0-9a-f]{12}$/, "must be a checkpoint id as create or list gave it (cp- and 12 hex digits)")
      .optional()
      .describe("The checkpoint, for rollback and release"),
    label: z
      .string()
      .max(MAX_LABEL_CHARS)
      .optional()
      .describe("For create: a few words saying what this point is (shown by list)"),
  })
  .strict()
  .superRefine((input, context) => {
    const needsId = input.action === "rollback" || input.action === "release";
    if (needsId && input.id === undefined)
      context.addIssue({ code: "custom", path: ["id"], message: `id is required for ${input.action}` });
    if (!needsId && input.id !== undefined)
      context.addIssue({ code: "custom", path: ["id"], message: `id is only for rollback and release` });
    if (input.action !== "create" && input.label !== undefined)
      context.addIssue({ code: "custom", path: ["label"], message: "label is only for create" });
  });

export const checkpointTool = defineTool({
  name: "checkpoint",
  description:
    "Save the session before a risky step and go back to it if the step goes wrong. action=create returns an id " +
    "and what it holds: the shell state (cwd, variables, functions) always; the files under the session's workspace " +
    "only when `holds` names one (files elsewhere are not saved). action=rollback with that id restores what it " +
    "holds (files made there since are deleted; background processes are ended); action=list shows the saved " +
    "ones; action=release deletes one you no longer need.",
  inputSchema: checkpointSchema,
  async handler(input, { session, signal }): Promise<ToolResult> {
    const options = signal === undefined ? {} : { signal };
    const named = labelsOf(session);
    switch (input.action) {
      case "create": {
        const checkpoint = await session.checkpoint(options);
        if (input.label !== undefined) named.set(checkpoint.id, input.label);
        return { checkpoint: described(checkpoint, named) };
      }
      case "list":
        return { checkpoints: session.checkpoints().map((checkpoint) => described(checkpoint, named)) };
      case "rollback": {
        const checkpoint = find(session, input.id!);
        if (checkpoint === undefined) return { error: unknown(session, input.id!) };
        await session.rollback(checkpoint, options);
        return { rolled_back: described(checkpoint, named), cwd: session.cwd };
      }
      case "release": {
        const checkpoint = find(session, input.id!);
        if (checkpoint === undefined) return { error: unknown(session, input.id!) };
        await session.releaseCheckpoint(checkpoint);
        named.delete(checkpoint.id);
        return { released: checkpoint.id };
      }
      default:
        return { error: `unknown action ${String(input.action)}` };
    }
  },
});

/** The optional checkpoint tool set: `[...TOOLS, ...CHECKPOINT_TOOLS]`. */
export const CHECKPOINT_TOOLS = Object.freeze([checkpointTool]);

function labelsOf(session: Environment): Map<string, string> {
  let named = labels.get(session);
  if (named === undefined) {
    named = new Map();
    labels.set(session, named);
  }
  return named;
}

const find = (session: Environment, id: string): Checkpoint | undefined =>
  session.checkpoints().find((checkpoint) => checkpoint.id === id);

function unknown(session: Environment, id: string): string {
  const ids = session.checkpoints().map((checkpoint) => checkpoint.id);
  return `no checkpoint ${id} in this session (released, or never made here); ${ids.length === 0 ? "there are none: create one first" : `there are: ${ids.join(", ")}`}`;
}

/** A checkpoint as the model reads it: snake_case, an ISO time, what it holds in words a model can act on. */
function described(checkpoint: Checkpoint, named: Map<string, string>): Record<string, unknown> {
  const workspace = checkpoint.holds.workspace;
  const label = named.get(checkpoint.id);
  return {
    id: checkpoint.id,
    created_at: checkpoint.createdAt.toISOString(),
    ...(label === undefined ? {} : { label }),
    holds:
      workspace !== undefined
        ? `shell state and the files under ${workspace.root}`
        : checkpoint.holds.filesystem !== undefined
          ? "shell state and every file of the sandbox"
          : "shell state only",
    ...(workspace === undefined ? {} : { workspace_bytes: workspace.bytes }),
  };
}
