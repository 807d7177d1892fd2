/**
 * OpenAI's `shell` tool (the Responses API's `shell_call`): a list of
 * commands run in order in the session, each answered with its stdout, its
 * stderr and an outcome, `{type: "exit", exit_code}` or `{type: "timeout"}`.
 *
 * The commands run in the session itself, so a `cd` or an `export` holds for
 * the next command and the next call. stderr is kept apart from stdout by
 * running each command with its stderr in a file of the session's private
 * directory, read back (and removed) right after. A timeout kills the
 * command's tree, answers `timeout` and runs none of the commands after it.
 */

import { randomBytes } from "node:crypto";
import { z } from "zod";
import { shellQuote } from "../../core/script.js";
import { approvalBlock } from "../terminal/approval.js";
import { defineTool, type HandlerContext, type ToolResult } from "../shared/tool-definition.js";
import { boundedText, runCaptured } from "./bounded-text.js";
import { scratchDir } from "./scratch-dir.js";

export type ShellOutcome = { type: "exit"; exit_code: number | null } | { type: "timeout" };

export interface ShellCommandOutput {
  stdout: string;
  stderr: string;
  outcome: ShellOutcome;
}

const inputSchema = z
  .object({
    commands: z
      .array(z.string().refine((command) => command.trim() !== "", "a command is empty"))
      .min(1)
      .describe("Shell commands to run in order, each in bash, in the session's state (its cwd and variables)"),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Time for all the commands together, in ms; past it the running command is killed (default 180000)"),
    max_output_length: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Characters of stdout and stderr together kept per command; beyond it head and tail are kept"),
  })
  .strict();

const description =
  "Runs shell commands in a persistent bash session, in order: the working directory, exported variables and " +
  "functions carry over from one command and one call to the next. Returns each command's stdout, stderr and " +
  "outcome (its exit code, or a timeout). A command that outlives timeout_ms is killed with everything it started.";

/** The error the Responses API's shell gives for a call it could not run: the reason on stderr, no exit code. */
export function shellError(message: string): ToolResult {
  return { output: [{ stdout: "", stderr: message, outcome: { type: "exit", exit_code: null } }], error: message };
}

export const openaiShellTool = defineTool({
  name: "shell",
  description,
  inputSchema,
  native: { "openai-responses": { type: "shell", environment: { type: "local" } } },
  errorResult: shellError,
  async handler(input, context): Promise<ToolResult> {
    const { settings } = context;
    const maxMs = settings.maxForegroundTimeoutSeconds * 1000;
    if (input.timeout_ms !== undefined && input.timeout_ms > maxMs) {
      return shellError(`timeout_ms ${input.timeout_ms} is above the maximum of ${maxMs} ms.`);
    }
    const limit = Math.min(input.max_output_length ?? settings.inlineOutputChars, settings.inlineOutputChars);
    const deadline = input.timeout_ms === undefined ? undefined : Date.now() + input.timeout_ms;
    const output: ShellCommandOutput[] = [];
    for (const command of input.commands) {
      const blocked = await approvalBlock(settings.approve, context.session, { command, cwd: context.session.cwd });
      if (blocked !== undefined) {
        output.push({ stdout: "", stderr: blocked, outcome: { type: "exit", exit_code: null } });
        break;
      }
      const timeoutMs = deadline === undefined ? undefined : deadline - Date.now();
      if (timeoutMs !== undefined && timeoutMs <= 0) {
        output.push({ stdout: "", stderr: "", outcome: { type: "timeout" } });
        break;
      }
      const entry = await runOne(command, timeoutMs, limit, context);
      output.push(entry);
      if (entry.outcome.type === "timeout" || context.signal?.aborted) break;
    }
    const result: ToolResult = { output };
    if (input.max_output_length !== undefined) result.max_output_length = input.max_output_length;
    return result;
  },
});

/** Runs one command with its stderr in a file, then reads the file back and removes it. */
async function runOne(
  command: string,
  timeoutMs: number | undefined,
  limit: number,
  context: HandlerContext,
): Promise<ShellCommandOutput> {
  const errFile = `${await scratchDir(context.session)}/stderr-${randomBytes(6).toString("hex")}`;
  // eval takes the redirection, so a syntax error in the command is reported on its stderr too.
  const run = await runCaptured(
    `builtin eval -- ${shellQuote(command)} 2>${shellQuote(errFile)}`,
    timeoutMs === undefined ? {} : { timeoutMs },
    context,
  );
  const err = await runCaptured(
    `command cat -- ${shellQuote(errFile)} 2>/dev/null; command rm -f -- ${shellQuote(errFile)}`,
    { isolated: true, cwd: "/" },
    // Read in full even when the call was interrupted, and not streamed as progress.
    { session: context.session, settings: context.settings },
  );
  const outcome: ShellOutcome = run.result.timedOut
    ? { type: "timeout" }
    : { type: "exit", exit_code: run.result.interrupted ? 130 : run.result.exitCode };
  const [stdoutLimit, stderrLimit] = shares(run.text.length, err.text.length, limit);
  return {
    stdout: await boundedText(run.text, stdoutLimit, context),
    stderr: await boundedText(err.text, stderrLimit, context),
    outcome,
  };
}

/** The limit split between stdout and stderr: each gets what it needs; when both need more, stderr gets at least a quarter. */
function shares(stdout: number, stderr: number, limit: number): [number, number] {
  if (stdout + stderr <= limit) return [Math.max(stdout, 1), Math.max(stderr, 1)];
  const forStderr = Math.min(stderr, Math.max(Math.floor(limit / 4), limit - stdout));
  return [Math.max(limit - forStderr, 1), Math.max(forStderr, 1)];
}
