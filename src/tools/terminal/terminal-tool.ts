/**
 * The `terminal` tool: one shell command in the session, in the foreground or
 * as a tracked background process.
 *
 * Layer 1 of result persistence lives here: output above the inline limit is
 * shown as head + tail, and the whole output (not a pre-cut copy) is saved
 * into the sandbox first, so nothing the model might need is thrown away.
 */

import { z } from "zod";
import { ProcessError } from "../../core/errors.js";
import { approvalBlock } from "./approval.js";
import { exitCodeMeaning } from "./exit-codes.js";
import { foregroundGuidance } from "./foreground-guard.js";
import {
  CallLineFilter,
  reportingCall,
  STUCK_NOTICE,
  stuckInputAdvice,
  watchForStuckInput,
  withoutCallLine,
  type StuckProcess,
} from "./stuck-input.js";
import { locationNote, saveText } from "../shared/result-persistence.js";
import { PTY_COLS, PTY_ROWS } from "../process/pty-size.js";
import { processRegistry } from "../process/process-registry.js";
import type { ToolSettings } from "../shared/tool-settings.js";
import { redactorFor } from "../shared/redaction.js";
import { cutHeadTail, stripAnsi, TextCapture } from "../shared/text.js";
import { truncationNotice } from "../../core/output.js";
import { defineTool, type ToolContext, type ToolResult } from "../shared/tool-definition.js";

const description = `Execute a shell command on a Linux environment. The filesystem, the working directory, exported variables, shell functions and aliases persist between calls; every call runs in a fresh bash, so nothing you start in the foreground keeps running.

Foreground commands return when they finish, with their output and exit code (\`timeout\` seconds at most; default 180, maximum 600). Output over 50 000 characters shows its head and tail; the whole of it is saved to a file the result names.

For anything long-running (servers, watchers, long builds) use background=true (foreground dev servers, nohup, setsid and disown are refused): the \`process\` tool can then poll, read, wait for, write to or kill it. Set notify_on_complete=true to be told when it ends. Interactive programs (REPL, editor, password prompt): background=true, pty=true, then process submit/keys/screen.

\`workdir\` runs one command elsewhere; the session's directory stays. Prefer the file tools to cat/sed/echo. Pipe git and other pagers through cat.`;

const inputSchema = z
  .object({
    command: z
      .string()
      .min(1, { message: "the command is empty", abort: true })
      // An empty command would run nothing: the model has made a mistake, and the argument error says which.
      .refine((command) => command.trim() !== "", "the command is empty")
      .describe("The command to execute"),
    background: z
      .boolean()
      .default(false)
      .describe("Run it as a tracked background process and return at once with its session_id"),
    timeout: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "Max seconds to wait for a foreground command (default: 180; foreground maximum: 600, above it use background=true)",
      ),
    workdir: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Working directory for this command only (absolute, or relative to the session directory). Defaults to the session working directory.",
      ),
    pty: z
      .boolean()
      .default(false)
      .describe(
        "Run it under a pseudo-terminal: with background=true for interactive programs (REPLs, editors, prompts); alone, for a command that needs a terminal (test -t 1, colours)",
      ),
    cols: z
      .number()
      .int()
      .min(PTY_COLS.min)
      .max(PTY_COLS.max)
      .optional()
      .describe(`With pty=true: terminal columns (default ${PTY_COLS.default})`),
    rows: z
      .number()
      .int()
      .min(PTY_ROWS.min)
      .max(PTY_ROWS.max)
      .optional()
      .describe(`With pty=true: terminal rows (default ${PTY_ROWS.default})`),
    notify_on_complete: z
      .boolean()
      .default(false)
      .describe("With background=true: queue a completion event with the exit code and the output's tail when it ends"),
  })
  .strict();

export const terminalTool = defineTool({
  name: "terminal",
  description,
  inputSchema,
  async handler(input, context): Promise<ToolResult> {
    const { session, settings } = context;
    if (!input.background && input.timeout !== undefined && input.timeout > settings.maxForegroundTimeoutSeconds) {
      return {
        error: `Foreground timeout ${input.timeout}s exceeds the maximum of ${settings.maxForegroundTimeoutSeconds}s. Use background=true with notify_on_complete=true for long-running commands.`,
      };
    }
    if (!input.background) {
      const guidance = foregroundGuidance(input.command);
      if (guidance !== undefined) return { output: "", exit_code: -1, error: guidance, status: "error" };
    }
    if (!input.pty && (input.cols !== undefined || input.rows !== undefined)) {
      return { error: `${input.cols !== undefined ? "cols" : "rows"} is only for pty=true (a terminal's size).` };
    }
    const size = input.pty ? { cols: input.cols ?? PTY_COLS.default, rows: input.rows ?? PTY_ROWS.default } : undefined;
    const cwd = input.workdir === undefined ? undefined : resolveWorkdir(input.workdir, session.cwd);
    const blocked = await approvalBlock(settings.approve, session, { command: input.command, cwd: cwd ?? session.cwd });
    if (blocked !== undefined) return { output: "", exit_code: -1, error: blocked, status: "blocked" };

    if (input.background) return startBackground(input.command, cwd, input.notify_on_complete, size, context, settings);
    let command = input.command;
    if (size !== undefined) {
      try {
        command = await processRegistry(session, settings.processes).foregroundPtyCommand(input.command, size);
      } catch (error) {
        return { output: "", exit_code: -1, error: error instanceof Error ? error.message : String(error) };
      }
    }
    const reply = await runForeground(command, cwd, input.timeout, context, settings);
    // A terminal ends its lines with \r\n; the model reads \n.
    if (size !== undefined && typeof reply.output === "string") reply.output = reply.output.replace(/\r+\n/g, "\n");
    return reply;
  },
});

async function runForeground(
  command: string,
  cwd: string | undefined,
  timeout: number | undefined,
  context: ToolContext,
  settings: ToolSettings,
): Promise<ToolResult> {
  const { session } = context;
  // The session keeps only head and tail in memory; the whole output is
  // captured here too, so that a long output can be saved whole.
  const capture = new TextCapture(settings.captureOutputChars);
  // A program waiting for keys on a terminal nobody types into is stopped like an interrupt (stuck-input.ts).
  const stop = new AbortController();
  let stuck: StuckProcess | undefined;
  let lastOutputAt = Date.now();
  const watched = settings.stuckInputMs > 0;
  const callLine = new CallLineFilter();
  const unwatch = !watched
    ? () => undefined
    : watchForStuckInput({
        probe: async (script) => (await session.execute(script, { isolated: true, timeoutMs: 30_000 })).output,
        mark: () => callLine.mark,
        lastOutputAt: () => lastOutputAt,
        quietMs: settings.stuckInputMs,
        onStuck: (found) => {
          stuck = found;
          stop.abort();
        },
      });
  let result;
  try {
    // It reports its call's mark first, so the probe knows this call's processes.
    result = await session.execute(watched ? reportingCall(command) : command, {
      ...(cwd === undefined ? {} : { cwd }),
      ...(timeout === undefined ? {} : { timeoutMs: timeout * 1000 }),
      signal: context.signal ? AbortSignal.any([context.signal, stop.signal]) : stop.signal,
      onOutput: (chunk) => {
        lastOutputAt = Date.now();
        const text = watched ? callLine.push(chunk) : chunk;
        if (text === "") return;
        capture.push(text);
        context.onOutput?.(text);
      },
    });
  } catch (error) {
    return {
      output: "",
      exit_code: -1,
      error: `Command execution failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  } finally {
    unwatch();
  }
  const held = callLine.finish();
  if (watched && held !== "") {
    capture.push(held);
    context.onOutput?.(held);
  }
  if (watched) result = { ...result, output: withoutCallLine(result.output) };
  // Stopped for waiting on a terminal (and not by the caller, whose interrupt came first).
  if (stuck !== undefined && !(context.signal?.aborted ?? false) && result.interrupted)
    result = { ...result, output: result.output.replace(/\[Command interrupted\]$/, STUCK_NOTICE) };
  else stuck = undefined;

  let output = result.output;
  if (result.truncated && !output.startsWith("[binary output,")) {
    // Bring back what the session cut; its notice (timeout, interrupt) is its last line.
    const notice = result.timedOut || result.interrupted ? output.slice(output.lastIndexOf("\n") + 1) : "";
    const text = capture.text();
    output = notice === "" ? text : text === "" ? notice : `${text}\n${notice}`;
  }
  output = stripAnsi(output);
  // Masked before it is saved or cut: the saved file holds no secret, and the limits count the masked text.
  output = redactorFor(context)?.redact(output) ?? output;

  if (output.length > settings.inlineOutputChars) {
    const saved = await saveText(session, output, {
      settings,
      ...(context.callId === undefined ? {} : { id: context.callId }),
    });
    const where =
      saved === undefined ? "the full output could not be saved" : locationNote(saved, session).replaceAll("\n", " ");
    output = cutHeadTail(
      output,
      settings.inlineOutputChars,
      settings.inlineHeadFraction,
      (_omitted, _total, omittedText) =>
        truncationNotice(Buffer.byteLength(omittedText), Buffer.byteLength(output), where),
    ).text;
  }

  const reply: ToolResult = { output, exit_code: result.exitCode };
  const meaning = exitCodeMeaning(command, result.exitCode);
  if (stuck !== undefined) reply.error = stuckInputAdvice(stuck, settings.stuckInputMs);
  else if (meaning !== undefined) reply.exit_code_meaning = meaning;
  return reply;
}

async function startBackground(
  command: string,
  cwd: string | undefined,
  notify: boolean,
  pty: { cols: number; rows: number } | undefined,
  context: ToolContext,
  settings: ToolSettings,
): Promise<ToolResult> {
  const registry = processRegistry(context.session, settings.processes);
  registry.redactor = redactorFor(context);
  try {
    const process = await registry.spawn(command, {
      ...(cwd === undefined ? {} : { cwd }),
      notifyOnComplete: notify,
      ...(pty === undefined ? {} : { pty }),
    });
    const reply: ToolResult = {
      output: "Background process started",
      session_id: process.id,
      pid: process.pid,
      status: "running",
    };
    if (notify) reply.notify_on_complete = true;
    if (pty !== undefined) {
      reply.pty = true;
      reply.hint = `Type with process(action="submit"|"write"|"keys", session_id="${process.id}"), read with process(action="screen") or process(action="wait", pattern=...).`;
    } else if (!notify)
      reply.hint = `Check on it with process(action="poll", session_id="${process.id}"), or process(action="wait") to block until it ends.`;
    return reply;
  } catch (error) {
    const message =
      error instanceof ProcessError
        ? error.message
        : `Failed to start background process: ${error instanceof Error ? error.message : String(error)}`;
    return { output: "", exit_code: -1, error: message };
  }
}

/** Absolute and `~` paths stay; a relative one is taken from the session's directory (not this process's). */
export function resolveWorkdir(workdir: string, sessionCwd: string): string {
  if (workdir.startsWith("/") || workdir === "~" || workdir.startsWith("~/")) return workdir;
  return `${sessionCwd.replace(/\/+$/, "")}/${workdir}`;
}
