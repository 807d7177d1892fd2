/**
 * The event a background process started with notifyOnComplete leaves when it
 * ends, for the model's next turn (drainCompletionEvents).
 */

import type { Redactor } from "../../core/redact.js";
import { shownOutput, type BackgroundProcess, type ProcessStatus } from "./background-process.js";

export interface CompletionEvent {
  type: "completion";
  /** The background process's id (`proc_…`), the one the process tool takes as `session_id`. */
  processId: string;
  /** @deprecated Use `processId` (the same value); kept for one release. */
  sessionId: string;
  command: string;
  status: ProcessStatus;
  exitCode: number | undefined;
  /** The last 2000 characters of output. */
  output: string;
  /** The event as one message for a model. */
  message: string;
}

export function completionEvent(process: BackgroundProcess, redactor: Redactor | undefined): CompletionEvent {
  const output = shownOutput(process, redactor).slice(-2000);
  const how =
    process.status === "killed"
      ? "was killed"
      : process.status === "lost"
        ? "ended without reporting an exit code"
        : process.exitCode === 0
          ? "completed normally"
          : "exited";
  const code = process.exitCode === undefined ? "" : ` (exit code ${process.exitCode})`;
  return {
    type: "completion",
    processId: process.id,
    sessionId: process.id,
    command: process.command,
    status: process.status,
    exitCode: process.exitCode,
    output,
    message: `[IMPORTANT: Background process ${process.id} ${how}${code}.\nCommand: ${redactor?.redact(process.command) ?? process.command}\nOutput:\n${output}]`,
  };
}
