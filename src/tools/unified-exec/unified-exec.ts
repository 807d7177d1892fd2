/**
 * Codex's "unified exec" pair, `exec_command` and `write_stdin`, an optional
 * tool set over the same background processes and pseudo-terminals as
 * `terminal(background=true, pty=true)` and `process` (process-registry.ts):
 * OpenAI's models are trained on these names and fields. `exec_command`
 * starts a command (under a terminal unless `tty` is false), waits up to
 * `yield_time_ms` for it to end and returns the output so far, with a
 * `session_id` while it still runs; `write_stdin` types `chars` into it and
 * returns what it printed since the previous of these two calls.
 *
 * Not in TOOLS: a caller opts in (`UNIFIED_EXEC_TOOLS` next to or instead of
 * the default tools) so a model never sees two ways to start a process unless
 * it was meant to.
 */

import { z } from "zod";
import { ProcessError } from "../../core/errors.js";
import { processRegistry, type BackgroundProcess, type ProcessRegistry } from "../process/process-registry.js";
import { plainText } from "../process/background-process.js";
import { defineTool, type HandlerContext, type ToolResult } from "../shared/tool-definition.js";
import { cutHeadTail } from "../shared/text.js";
import { resolveWorkdir } from "../terminal/terminal-tool.js";
import { approvalBlock } from "../terminal/approval.js";
import { interrupt } from "../process/interrupt.js";
import { typedLineBlock } from "../process/typed-lines.js";

/** Codex's defaults and bounds for the wait before a call returns. */
const EXEC_YIELD_MS = 10_000;
const WRITE_YIELD_MS = 250;
const MIN_YIELD_MS = 250;
const MAX_YIELD_MS = 30_000;
const DEFAULT_MAX_OUTPUT_TOKENS = 10_000;
/** A rough count, as Codex's own truncation makes it: about four characters a token. */
const CHARS_PER_TOKEN = 4;
const TTY_SIZE = { cols: 80, rows: 24 };

/** Where each process's output was read up to by these tools, in characters of everything it printed. */
const readUpTo = new WeakMap<BackgroundProcess, number>();

const execSchema = z
  .object({
    cmd: z
      .string()
      .refine((cmd) => cmd.trim() !== "", "the command is empty")
      .describe("The shell command to run (bash, in the session's state)"),
    workdir: z.string().optional().describe("Directory to run it in (default: the session's cwd)"),
    tty: z
      .boolean()
      .default(false)
      .describe(
        "Run it under a terminal. Default false (plain pipes); true for interactive programs, prompts, REPLs, colours",
      ),
    yield_time_ms: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(`How long to wait for output or the end before returning, in ms (default ${EXEC_YIELD_MS})`),
    max_output_tokens: z.number().int().min(1).optional().describe("Output beyond this many tokens is cut"),
  })
  .strict();

const writeSchema = z
  .object({
    session_id: z.coerce.string().describe("The session_id exec_command returned"),
    chars: z
      .string()
      .describe(
        "Text to type, control characters included (\\r for Enter, \\u0003 for Ctrl-C, \\u0004 for Ctrl-D, which without a tty closes stdin); empty to poll",
      ),
    yield_time_ms: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(`How long to wait for output before returning, in ms (default ${WRITE_YIELD_MS})`),
    max_output_tokens: z.number().int().min(1).optional().describe("Output beyond this many tokens is cut"),
  })
  .strict();

export const execCommandTool = defineTool({
  name: "exec_command",
  description:
    "Run a shell command, starting from the session's state (its cwd, exported variables and functions). Returns its output " +
    "once it ends or after yield_time_ms; if it still runs, the reply has a session_id: send input and read more " +
    "with write_stdin. Runs with plain pipes unless tty=true (a terminal, for interactive programs).",
  inputSchema: execSchema,
  async handler(input, context): Promise<ToolResult> {
    const { session, settings } = context;
    const cwd = input.workdir === undefined ? undefined : resolveWorkdir(input.workdir, session.cwd);
    const blocked = await approvalBlock(settings.approve, session, { command: input.cmd, cwd: cwd ?? session.cwd });
    if (blocked !== undefined) return { error: blocked };
    const started = performance.now();
    const registry = processRegistry(session, settings.processes);
    let process: BackgroundProcess;
    try {
      process = await registry.spawn(input.cmd, {
        ...(cwd === undefined ? {} : { cwd }),
        ...(input.tty ? { pty: TTY_SIZE } : {}),
      });
    } catch (error) {
      if (error instanceof ProcessError) return { error: error.message };
      throw error;
    }
    readUpTo.set(process, 0);
    return await settle(registry, process, yieldMs(input.yield_time_ms, EXEC_YIELD_MS), input, started, context);
  },
});

export const writeStdinTool = defineTool({
  name: "write_stdin",
  description:
    "Send characters to a command exec_command left running (chars may hold control characters: \\r is Enter, " +
    "\\u0003 is Ctrl-C), wait yield_time_ms, and return what it printed since the last exec_command or write_stdin " +
    "reply. Empty chars just reads.",
  inputSchema: writeSchema,
  async handler(input, context): Promise<ToolResult> {
    const started = performance.now();
    const registry = processRegistry(context.session, context.settings.processes);
    const process = registry.get(input.session_id);
    // Codex's words: a session whose end was reported is gone, as is one that never was.
    if (process === undefined || !readUpTo.has(process))
      return { error: `write_stdin failed: Unknown process id ${input.session_id}` };
    const blocked = await typedLineBlock(context.settings.approve, context.session, process, input.chars);
    if (blocked !== undefined) return { error: blocked, session_id: process.id };
    if (!(await send(registry, context.session, process, input.chars))) {
      return {
        error: `session_id ${input.session_id} takes no more input: the command has ${process.status === "running" ? "closed its stdin" : "ended"}.`,
        ...(await reply(registry, process, input, started, context)),
      };
    }
    return await settle(registry, process, yieldMs(input.yield_time_ms, WRITE_YIELD_MS), input, started, context);
  },
});

/**
 * Types `chars` into the process. On a pipe (tty=false) the two control
 * characters a terminal would act on are acted on here: Ctrl-D alone ends the
 * input, and each Ctrl-C is SIGINT to the process's group, in order with the
 * text around it. False when the process takes no more input.
 */
async function send(
  registry: ProcessRegistry,
  session: HandlerContext["session"],
  process: BackgroundProcess,
  chars: string,
): Promise<boolean> {
  if (chars === "") return true;
  if (process.pty !== undefined) return await registry.write(process, chars);
  if (chars === "\x04") return await registry.closeStdin(process);
  const parts = chars.split("\x03");
  for (const [index, part] of parts.entries()) {
    if (index > 0 && !(await interrupt(session, process))) return false;
    if (part !== "" && !(await registry.write(process, part))) return false;
  }
  return true;
}

/** exec_command and write_stdin, for `tools` of the MCP server, the AI SDK adapter or toolDefinitions. */
export const UNIFIED_EXEC_TOOLS = Object.freeze([execCommandTool, writeStdinTool]);

function yieldMs(requested: number | undefined, fallback: number): number {
  return Math.min(MAX_YIELD_MS, Math.max(MIN_YIELD_MS, requested ?? fallback));
}

/** Waits until the command ends or the yield passes, then replies. */
async function settle(
  registry: ProcessRegistry,
  process: BackgroundProcess,
  waitMs: number,
  input: { max_output_tokens?: number | undefined },
  started: number,
  context: HandlerContext,
): Promise<ToolResult> {
  await registry.wait(process, waitMs, context.signal);
  return await reply(registry, process, input, started, context);
}

/** The output since the last reply; `exit_code` once the command ended, `session_id` while it runs. */
async function reply(
  registry: ProcessRegistry,
  process: BackgroundProcess,
  input: { max_output_tokens?: number | undefined },
  started: number,
  context: HandlerContext,
): Promise<ToolResult> {
  await registry.refresh([process]);
  const total = process.droppedChars + process.output.length;
  const from = readUpTo.get(process) ?? 0;
  readUpTo.set(process, total);
  const raw = process.output.slice(Math.max(0, from - process.droppedChars));
  let output = plainText(process, raw);
  if (from < process.droppedChars)
    output = `[${process.droppedChars - from} earlier characters were no longer kept]\n${output}`;
  const limit = (input.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS) * CHARS_PER_TOKEN;
  const cut = cutHeadTail(output, limit, 0.5, (omitted) => `\n…${omitted} characters cut…\n`);
  const result: ToolResult = {
    output: cut.text,
    wall_time: Math.round(performance.now() - started) / 1000,
  };
  if (cut.omitted > 0) result.original_token_count = Math.ceil(output.length / CHARS_PER_TOKEN);
  if (process.status === "running") {
    result.session_id = process.id;
    if (context.signal?.aborted) result.note = "The wait was interrupted; the command still runs.";
    return result;
  }
  process.endSeen = true;
  // Reported once: from now on its session_id is unknown to write_stdin, as in Codex.
  readUpTo.delete(process);
  result.exit_code = process.exitCode ?? null;
  if (process.status === "killed") result.note = "The command was killed.";
  return result;
}
