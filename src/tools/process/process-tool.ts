/**
 * The `process` tool: the model's handle on background processes started by
 * `terminal(background=true)`. Every action costs at most one command round
 * trip; `list` refreshes all running processes in that one trip.
 */

import { z } from "zod";
import type { Redactor } from "../../core/redact.js";
import { processRegistry, shownOutput, type BackgroundProcess, type ProcessRegistry } from "./process-registry.js";
import { redactorFor } from "../shared/redaction.js";
import { DEFAULT_TOOL_SETTINGS } from "../shared/tool-settings.js";
import { defineTool, type ToolResult } from "../shared/tool-definition.js";

const ACTIONS = ["list", "poll", "log", "wait", "kill", "write", "submit", "close"] as const;

const description = `Manage background processes started with terminal(background=true).

Actions:
- list: every process of this session with its status and the tail of its output
- poll: status, exit code when done, and the last 1000 characters of output
- log: output lines; offset=0 shows the last \`limit\` lines (default 200), offset=N starts at line N
- wait: block until the process ends or \`timeout\` seconds pass (default 180)
- kill: stop the process and everything it started
- write: send \`data\` to its stdin as is; submit: send \`data\` plus a newline; close: close its stdin (EOF)`;

const inputSchema = z
  .object({
    action: z.enum(ACTIONS).describe("What to do"),
    session_id: z.coerce
      .string()
      .optional()
      .describe("The process's session_id from terminal(background=true); required except for list"),
    data: z.string().optional().describe("For write and submit: the text to send to stdin"),
    timeout: z.number().min(1).optional().describe("For wait: seconds to wait at most (default 180)"),
    offset: z.number().int().min(0).optional().describe("For log: first line (0 = show the last `limit` lines)"),
    limit: z.number().int().min(1).optional().describe("For log: number of lines (default 200)"),
  })
  .strict();

const DEFAULT_WAIT_SECONDS = 180;

export const processTool = defineTool({
  name: "process",
  description,
  inputSchema,
  async handler(input, context): Promise<ToolResult> {
    const settings = context.settings ?? DEFAULT_TOOL_SETTINGS;
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
        const data = input.action === "submit" ? `${input.data}\n` : input.data;
        if (!(await registry.write(process, data))) return stdinUnavailable(process);
        return { status: "ok", bytes_written: Buffer.byteLength(data, "utf8") };
      }
      case "close":
        if (!(await registry.closeStdin(process))) return stdinUnavailable(process);
        return { status: "ok", note: "stdin closed: the process reads end-of-file after the data already sent" };
    }
  },
});

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
  };
}

function log(process: BackgroundProcess, offset: number, limit: number, redactor: Redactor | undefined): ToolResult {
  if (process.status !== "running") process.endSeen = true;
  const lines = shownOutput(process, redactor).split("\n");
  if (lines.at(-1) === "") lines.pop();
  const shown = offset === 0 ? lines.slice(-limit) : lines.slice(offset, offset + limit);
  const reply: ToolResult = {
    session_id: process.id,
    status: process.status,
    output: shown.join("\n"),
    total_lines: lines.length,
    showing: `${shown.length} lines`,
    ...exitFields(process),
  };
  if (process.droppedChars > 0) {
    reply.log_note = `The first ${process.droppedChars} characters are no longer kept in memory; line numbers count from what is kept. The whole log is in ${process.files.log}.`;
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
