/**
 * One background process as the registry tracks it (process-registry.ts),
 * and what is derived from it alone: the text a model may see, and the
 * entry the reap script takes.
 */

import { ProcessError } from "../../core/errors.js";
import type { ProcessChannel } from "../../core/process-channel.js";
import type { Redactor } from "../../core/redact.js";
import { stripAnsi } from "../shared/text.js";
import type { ProcessFiles } from "./process-scripts.js";
import { shownPtyText, type PtyTerminal } from "./pty-terminal.js";

export type ProcessStatus = "running" | "exited" | "killed" | "lost";

export interface BackgroundProcess {
  readonly id: string;
  readonly command: string;
  readonly cwd: string;
  /** The wrapper's PID inside the backend; also the id of the process group. */
  readonly pid: number;
  readonly files: ProcessFiles;
  readonly startedAt: number;
  readonly notifyOnComplete: boolean;
  /** Its stderr is kept apart (`err`): `output` is its stdout alone. */
  readonly separateStreams: boolean;
  status: ProcessStatus;
  /** The command's exit code; undefined while running or when it could not be learnt (killed with SIGKILL). */
  exitCode: number | undefined;
  finishedAt: number | undefined;
  /** The tail of the output, at most `bufferChars`. */
  output: string;
  /** Characters that fell out of `output` (the log file inside the backend still has them). */
  droppedChars: number;
  /** Log bytes read so far. */
  offset: number;
  /** Bytes of a UTF-8 character cut by the end of the last read. */
  carry: Uint8Array;
  /** The model has seen the end (poll, wait, log or kill), so no completion event is due. */
  endSeen: boolean;
  stdinOpen: boolean;
  /** True while `kill` runs: its end is reported as "killed". */
  killing: boolean;
  /** Set when the process runs under a pseudo-terminal (terminal pty=true). */
  pty: PtyState | undefined;
  /** Its output as it arrives (output-stream.ts); set for a PTY process or an `onOutput` listener. */
  stream: ProcessOutputStream | undefined;
}

/** What the registry holds of a process's output stream (output-stream.ts). */
export interface ProcessOutputStream {
  /** The live line to its stdin through the session's helper, while there is one. */
  readonly channel: ProcessChannel | undefined;
  /** The process ended: the stream ends once its last output is in. */
  processEnded(): void;
  /** Stops now (the session closes). */
  stop(): void;
  /** Writes its stdin through the stream's channel (a split stream's; a PTY's go the PTY's way), one at a time. */
  write?(data: string): Promise<boolean>;
}

/** A process just started: running, nothing read yet. */
export function newBackgroundProcess(
  start: Pick<BackgroundProcess, "id" | "command" | "cwd" | "pid" | "files" | "notifyOnComplete"> & {
    separateStreams?: boolean;
  },
): BackgroundProcess {
  return {
    ...start,
    separateStreams: start.separateStreams === true,
    startedAt: Date.now(),
    status: "running",
    exitCode: undefined,
    finishedAt: undefined,
    output: "",
    droppedChars: 0,
    offset: 0,
    carry: new Uint8Array(),
    endSeen: false,
    stdinOpen: true,
    killing: false,
    pty: undefined,
    stream: undefined,
  };
}

/** Node's side of a PTY process. */
export interface PtyState {
  terminal: PtyTerminal;
}

/** The process's PTY state; `action` names what needs one in the error when it runs without. */
export function ptyStateOf(process: BackgroundProcess, action: string): PtyState {
  if (process.pty === undefined)
    throw new ProcessError(
      `${action} needs a pseudo-terminal: start the process with terminal(background=true, pty=true).`,
    );
  return process.pty;
}

/** A pseudo-terminal's size, in character cells. */
export interface PtySize {
  cols: number;
  rows: number;
}

/**
 * The kept output as a model may see it: without terminal escapes, secrets
 * masked, also one cut by the dropped start of the buffer or still being
 * printed (the end of a running process's output is open).
 */
export function shownOutput(process: BackgroundProcess, redactor: Redactor | undefined): string {
  const text = plainText(process, process.output);
  if (redactor === undefined) return text;
  return redactor.redact(text, {
    openStart: process.droppedChars > 0,
    openEnd: process.status === "running",
    keepLines: true,
  });
}

/** A piece of the process's output without terminal escapes (a PTY's `\r\n` as `\n`). */
export function plainText(process: BackgroundProcess, raw: string): string {
  return process.pty === undefined ? stripAnsi(raw) : shownPtyText(raw);
}

export const reapEntry = (process: BackgroundProcess) => ({
  id: process.id,
  pgid: process.pid,
  files: process.files,
  running: process.status === "running",
});

/** Length of the longest prefix that does not end inside a UTF-8 character. */
export function completeUtf8Length(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}
