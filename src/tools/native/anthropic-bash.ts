/**
 * Anthropic's bash tool (`bash_20250124`): `{command}` runs in the session,
 * whose cwd, variables and functions persist as in the persistent bash
 * session Claude expects, and `{restart: true}` ends the session's processes
 * and puts back the state the tool first found (bash-restart.ts).
 *
 * The result is text (`content`, or `error` for a tool_result with is_error),
 * with the texts Anthropic's documentation gives: stdout and stderr as the
 * command printed them; a command that fails (exit code not 0) is an error
 * whose text is its output; "Error: Command timed out after N seconds".
 */

import { z } from "zod";
import { positiveNumber } from "../../core/options.js";
import { approvalBlock } from "../terminal/approval.js";
import { defineTool, type ToolDefinition, type ToolResult } from "../shared/tool-definition.js";
import { anthropicError } from "./anthropic-error.js";
import { bashState, markedCommand, restartBash } from "./bash-restart.js";
import { boundedText, runCaptured } from "./bounded-text.js";

export interface BashToolOptions {
  /** A command still running after this is killed with everything it started. @default 180000 */
  timeoutMs?: number;
}

const inputSchema = z
  .object({
    command: z.string().optional().describe("The bash command to run. Required unless the tool is being restarted."),
    restart: z.boolean().optional().describe("Specifying true will restart this tool."),
  })
  .strict();

export function createBashTool(options: BashToolOptions = {}): ToolDefinition<typeof inputSchema> {
  const timeoutMs = positiveNumber("timeoutMs", options.timeoutMs, 180_000);
  return defineTool({
    name: "bash",
    description:
      "Run commands in a bash shell. The working directory, exported variables and functions persist between " +
      "calls. restart=true ends every process the session started and returns to the state it started in. " +
      `A command still running after ${Math.round(timeoutMs / 1000)} seconds is killed.`,
    inputSchema,
    native: { anthropic: { type: "bash_20250124", name: "bash" } },
    errorResult: anthropicError,
    async handler({ command, restart }, context): Promise<ToolResult> {
      if (restart === true) {
        await restartBash(context);
        if (command === undefined) return { content: "Bash session restarted" };
      }
      if (command === undefined || command.trim() === "") return anthropicError("no command provided.");
      const { session, settings } = context;
      const blocked = await approvalBlock(settings.approve, session, { command, cwd: session.cwd });
      if (blocked !== undefined) return anthropicError(blocked);
      const state = await bashState(session);
      const { result, text } = await runCaptured(markedCommand(command, state), { timeoutMs }, context);
      const output = (await boundedText(text, settings.inlineOutputChars, context)).replace(/\n$/, "");
      if (result.timedOut) {
        const seconds = Math.round(timeoutMs / 100) / 10;
        return {
          ...anthropicError(`Command timed out after ${seconds} seconds${output === "" ? "" : `\n${output}`}`),
          exit_code: result.exitCode,
        };
      }
      if (result.interrupted) return { ...anthropicError("Command interrupted"), exit_code: result.exitCode };
      if (result.exitCode !== 0) {
        return { error: output === "" ? `Error: exit code ${result.exitCode}` : output, exit_code: result.exitCode };
      }
      return { content: output, exit_code: 0 };
    },
  });
}

export const anthropicBashTool = createBashTool();
