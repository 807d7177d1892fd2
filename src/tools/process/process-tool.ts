/**
 * The `process` tool: the model's handle on background processes started by
 * `terminal(background=true)`. Every action costs at most one command round
 * trip; `list` refreshes all running processes in that one trip.
 */

import { z } from "zod";
import type { Redactor } from "../../core/redact.js";
import { InvalidOptionError, ProcessError } from "../../core/errors.js";
import { processRegistry, shownOutput, type BackgroundProcess, type ProcessRegistry } from "./process-registry.js";
import { keysBytes } from "./pty-keys.js";
import type { PatternWait } from "./pty-terminal.js";
import { PTY_COLS, PTY_ROWS } from "./pty-size.js";
import { redactorFor } from "../shared/redaction.js";
import type { ToolSettings } from "../shared/tool-settings.js";
import { defineTool, type HandlerContext, type ToolResult } from "../shared/tool-definition.js";
import { typedLineBlock } from "./typed-lines.js";

const ACTIONS = [
  "list",
  "poll",
  "log",
  "wait",
  "kill",
  "write",
  "submit",
  "keys",
  "screen",
  "resize",
  "close",
] as const;

const description = `Manage background processes started with terminal(background=true).

Actions:
- list: every process of this session with its status and the tail of its output
- poll: status, exit code when done, and the last 1000 characters of output
- log: output lines; offset=0 shows the last \`limit\` lines (default 200), offset=N starts at line N (1 is the first)
- wait: block until the process ends or \`timeout\` seconds pass (default 180); with \`pattern\` (a regex, pty only), until output since your previous action matches, returning that output
- kill: stop the process and everything it started
- write: send \`data\` to its stdin as is; submit: send \`data\` plus Enter; close: close its stdin (EOF)
- pty=true processes only: keys: send tmux key names (["C-c"], ["Up", "Enter"], "Escape", "Tab", "F2"); screen: the visible terminal screen and cursor; resize: set \`cols\` and \`rows\``;

const inputSchema = z
  .object({
    action: z.enum(ACTIONS).describe("What to do"),
    session_id: z.coerce
      .string()
      .optional()
      .describe("The process's session_id from terminal(background=true); required except for list"),
    data: z.string().optional().describe("For write and submit: the text to send to stdin"),
    keys: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe(
        'For keys: tmux key names in order, e.g. ["C-c"], ["Escape", ":wq", "Enter"]; other text is sent as is',
      ),
    pattern: z
      .string()
      .min(1)
      .max(1000)
      .optional()
      .describe(
        "For wait on a pty process: a regular expression (RE2 syntax) awaited in the output since your previous action",
      ),
    cols: z.number().int().min(PTY_COLS.min).max(PTY_COLS.max).optional().describe("For resize: columns"),
    rows: z.number().int().min(PTY_ROWS.min).max(PTY_ROWS.max).optional().describe("For resize: rows"),
    timeout: z.number().min(1).optional().describe("For wait: seconds to wait at most (default 180)"),
    offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("For log: the line to start at, 1 for the first (0 or absent: the last `limit` lines)"),
    limit: z.number().int().min(1).optional().describe("For log: number of lines (default 200)"),
  })
  .strict();

const DEFAULT_WAIT_SECONDS = 180;
/** A pattern wait's answer shows the end of the output since the previous action, at most this much. */
const WAIT_OUTPUT_CHARS = 2000;

export const processTool = defineTool({
  name: "process",
  description,
  inputSchema,
  async handler(input, context): Promise<ToolResult> {
    const { settings } = context;
    const registry = processRegistry(context.session, settings.processes);
    const redactor = redactorFor(context);
    registry.redactor = redactor;
    if (input.action === "list") {
      await registry.refresh();
      return { processes: registry.all().map((process) => listEntry(process, redactor)) };
    }
    if (input.session_id === undefined || input.session_id === "") {
      return { error: `session_id is required for ${input.action}; process(action="list") shows the session ids.` };
    }
    const process = registry.get(input.session_id);
    if (!process) {
      return {
        status: "not_found",
        error: `No process with ID ${input.session_id}; process(action="list") shows the session ids.`,
      };
    }

    switch (input.action) {
      case "poll": {
        await registry.refresh([process]);
        return poll(process, redactor);
      }
      case "log":
        await registry.refresh([process]);
        return log(process, input.offset ?? 0, input.limit ?? 200, redactor);
      case "wait":
        if (input.pattern !== undefined)
          return waitForPattern(registry, process, input.pattern, input.timeout, settings, context.signal, redactor);
        return wait(registry, process, input.timeout, settings.maxForegroundTimeoutSeconds, context.signal, redactor);
      case "kill": {
        if (process.status !== "running") {
          // Its command ended, but what it started in the background may still run.
          const reaped = await registry.reap(process);
          const reply: ToolResult = { status: "already_exited", session_id: process.id, ...exitFields(process) };
          if (reaped > 0) reply.note = "The command had ended; the processes it left running were killed.";
          return reply;
        }
        await registry.kill(process);
        process.endSeen = true;
        return { status: "killed", session_id: process.id, ...exitFields(process) };
      }
      case "write":
      case "submit": {
        if (input.data === undefined) return { error: `data is required for ${input.action}.` };
        // A terminal's Enter is a carriage return (the line discipline makes it a newline for the program).
        const enter = process.pty === undefined ? "\n" : "\r";
        const data = input.action === "submit" ? `${input.data}${enter}` : input.data;
        return await send(registry, process, data, context);
      }
      case "keys": {
        if (input.keys === undefined) return { error: 'keys is required for keys, e.g. keys=["C-c"].' };
        if (process.pty === undefined) return notPty("keys");
        let data: string;
        try {
          data = keysBytes(input.keys);
        } catch (error) {
          if (error instanceof ProcessError) return { error: error.message };
          throw error;
        }
        return await send(registry, process, data, context);
      }
      case "screen": {
        if (process.pty === undefined) return notPty("screen");
        // Masked on each logical line: a secret that wraps over two rows is one secret.
        const shot = await registry.screen(process, redactor && ((text) => redactor.maskedRanges(text)));
        return { session_id: process.id, status: process.status, ...shot };
      }
      case "resize": {
        if (input.cols === undefined || input.rows === undefined)
          return { error: "cols and rows are both required for resize." };
        if (process.pty === undefined) return notPty("resize");
        registry.markAction(process);
        if (!(await registry.resize(process, { cols: input.cols, rows: input.rows })))
          return { error: `Process ${process.id} has ${process.status}: its terminal cannot be resized.` };
        return { status: "ok", cols: input.cols, rows: input.rows };
      }
      case "close":
        if (!(await registry.closeStdin(process))) return stdinUnavailable(process);
        return { status: "ok", note: "stdin closed: the process reads end-of-file after the data already sent" };
    }
  },
});

/** Types `data` into the process, each line it completes first checked by the approval hook (typed-lines.ts). */
async function send(
  registry: ProcessRegistry,
  process: BackgroundProcess,
  data: string,
  context: HandlerContext,
): Promise<ToolResult> {
  const blocked = await typedLineBlock(context.settings.approve, context.session, process, data);
  if (blocked !== undefined) return { status: "blocked", error: blocked };
  registry.markAction(process);
  if (!(await registry.write(process, data))) return stdinUnavailable(process);
  return { status: "ok", bytes_written: Buffer.byteLength(data, "utf8") };
}

function notPty(action: string): ToolResult {
  return {
    error: `${action} works on a pseudo-terminal process only: start it with terminal(background=true, pty=true).`,
  };
}

async function waitForPattern(
  registry: ProcessRegistry,
  process: BackgroundProcess,
  source: string,
  requested: number | undefined,
  settings: ToolSettings,
  signal: AbortSignal | undefined,
  redactor: Redactor | undefined,
): Promise<ToolResult> {
  if (process.pty === undefined) return notPty("wait with a pattern");
  const seconds = Math.min(requested ?? DEFAULT_WAIT_SECONDS, settings.maxForegroundTimeoutSeconds);
  let answer: PatternWait;
  try {
    // m: ^ and $ match at line ends, so a prompt can be awaited as ^>>> $.
    answer = await registry.waitFor(process, { source, flags: "m" }, seconds * 1000, signal);
  } catch (error) {
    if (error instanceof InvalidOptionError)
      return {
        error: `pattern ${JSON.stringify(source)} cannot be used: ${error.message}. Patterns are matched in linear time (RE2 syntax): lookahead and backreferences are not available.`,
      };
    if (error instanceof ProcessError) return { error: error.message };
    throw error;
  }
  registry.markAction(process);
  const output = redactor?.redact(answer.output, { keepLines: true }) ?? answer.output;
  const reply: ToolResult = {
    session_id: process.id,
    status: answer.status === "ended" ? process.status : answer.status,
    output: output.slice(-WAIT_OUTPUT_CHARS),
    ...exitFields(process),
  };
  if (output.length > WAIT_OUTPUT_CHARS)
    reply.output_note = `The last ${WAIT_OUTPUT_CHARS} of ${output.length} characters since your previous action; process(action="log") has more.`;
  if (answer.status === "timeout") reply.timeout_note = `No match for ${source} within ${seconds}s`;
  if (answer.status === "ended") {
    process.endSeen = true;
    reply.note = `The process ended before its output matched ${source}.`;
  }
  return reply;
}

function stdinUnavailable(process: BackgroundProcess): ToolResult {
  return {
    error: `Process stdin not available (${process.status === "running" ? "its stdin was closed" : `the process has ${process.status}`}).`,
  };
}

function exitFields(process: BackgroundProcess): ToolResult {
  if (process.status === "running") return {};
  const fields: ToolResult = { exit_code: process.exitCode ?? null };
  if (process.status === "killed") fields.completion_reason = "killed";
  if (process.status === "lost") {
    fields.completion_reason = "lost";
    fields.note =
      "The process ended without recording its exit code (it was killed from outside, or its backend restarted).";
  }
  return fields;
}

/** For a process started with its stderr apart (a program's spawn): where its stderr is, since the output is not it. */
function streamsNote(process: BackgroundProcess): ToolResult {
  if (!process.separateStreams) return {};
  return {
    stderr_note: `This process keeps its stderr apart: the output shown is its stdout alone; its stderr is in the file ${process.files.err} (bounded like the log).`,
  };
}

const uptime = (process: BackgroundProcess): number =>
  Math.round(((process.finishedAt ?? Date.now()) - process.startedAt) / 1000);

function listEntry(process: BackgroundProcess, redactor: Redactor | undefined): ToolResult {
  return {
    session_id: process.id,
    command: process.command.slice(0, 200),
    cwd: process.cwd,
    pid: process.pid,
    started_at: new Date(process.startedAt).toISOString().slice(0, 19),
    uptime_seconds: uptime(process),
    status: process.status,
    output_preview: shownOutput(process, redactor).slice(-200),
    ...exitFields(process),
  };
}

function poll(process: BackgroundProcess, redactor: Redactor | undefined): ToolResult {
  if (process.status !== "running") process.endSeen = true;
  return {
    session_id: process.id,
    command: process.command,
    status: process.status,
    pid: process.pid,
    uptime_seconds: uptime(process),
    output_preview: shownOutput(process, redactor).slice(-1000),
    ...exitFields(process),
    ...streamsNote(process),
  };
}

function log(process: BackgroundProcess, offset: number, limit: number, redactor: Redactor | undefined): ToolResult {
  if (process.status !== "running") process.endSeen = true;
  const lines = shownOutput(process, redactor).split("\n");
  if (lines.at(-1) === "") lines.pop();
  // Line numbers start at 1, as read_file's; offset 0 is the end.
  const first = offset === 0 ? Math.max(1, lines.length - limit + 1) : offset;
  const shown = lines.slice(first - 1, first - 1 + limit);
  const reply: ToolResult = {
    session_id: process.id,
    status: process.status,
    output: shown.join("\n"),
    total_lines: lines.length,
    showing: shown.length === 0 ? "0 lines" : `${shown.length} lines, from line ${first}`,
    ...exitFields(process),
    ...streamsNote(process),
  };
  if (process.droppedChars > 0) {
    reply.log_note = `The first ${process.droppedChars} characters are no longer kept in memory: line 1 is the first line kept. The log file ${process.files.log} keeps more (docs/tools.md says how much).`;
  }
  return reply;
}

async function wait(
  registry: ProcessRegistry,
  process: BackgroundProcess,
  requested: number | undefined,
  capSeconds: number,
  signal: AbortSignal | undefined,
  redactor: Redactor | undefined,
): Promise<ToolResult> {
  const seconds = Math.min(requested ?? DEFAULT_WAIT_SECONDS, capSeconds);
  const note =
    requested !== undefined && requested > capSeconds
      ? `Requested wait of ${requested}s was clamped to the limit of ${capSeconds}s`
      : undefined;
  const ended = await registry.wait(process, seconds * 1000, signal);
  const extra = note === undefined ? {} : { timeout_note: note };
  if (ended) {
    process.endSeen = true;
    return {
      session_id: process.id,
      status: process.status,
      ...exitFields(process),
      output: shownOutput(process, redactor).slice(-2000),
      ...extra,
    };
  }
  if (signal?.aborted) {
    return {
      session_id: process.id,
      status: "interrupted",
      output: shownOutput(process, redactor).slice(-1000),
      note: "The wait was interrupted; the process is still running.",
    };
  }
  return {
    session_id: process.id,
    status: "timeout",
    output: shownOutput(process, redactor).slice(-1000),
    timeout_note: note ?? `Waited ${seconds}s, process still running`,
  };
}
