/**
 * What each tool answers, as types: the map from a tool's name to its result,
 * so `callTool("terminal", …)` and `handleToolCall(env, "read_file", …)` are
 * typed without a cast. Every result may be only `{ error }` (bad arguments,
 * a failure the model is told about), and any string field of a large result
 * may be the `<persisted-output>` preview that replaced it (layer 2 of result
 * persistence); a result with no string field at all becomes `{ output }`.
 *
 * Type aliases, not interfaces: an alias of an object type is assignable to
 * `ToolResult` (an index signature), so existing callers that hold a
 * `ToolResult` keep compiling.
 */

import type { ProcessStatus } from "./process/background-process.js";

type KeysOf<Union> = Union extends unknown ? keyof Union : never;
/**
 * Each member of the union, with the other members' keys as `?: undefined`:
 * every field can be read on the result (`string | undefined` where only some
 * shapes have it), and checking one narrows to the shapes that have it.
 */
type Exclusive<Union, Keys extends PropertyKey = KeysOf<Union>> = Union extends unknown
  ? Union & { [Key in Exclude<Keys, keyof Union>]?: undefined }
  : never;

/** The answer every tool can give instead of its result. */
export type ToolErrorResult = { error: string };

/** A result whose only string field was too large and was saved (result persistence): `{ output }` is the preview. */
export type PersistedToolResult = { output: string };

/** `terminal`: a foreground command's output and exit code, or a background process started. */
export type TerminalResult = Exclusive<
  | ToolErrorResult
  | { output: string; exit_code: number; exit_code_meaning?: string }
  /** Refused before it ran (a foreground server, the approval hook) or failed to start: exit_code -1. */
  | { output: ""; exit_code: -1; error: string; status?: "error" | "blocked" }
  | {
      output: string;
      session_id: string;
      pid: number;
      status: "running";
      notify_on_complete?: true;
      pty?: true;
      hint?: string;
    }
>;

/** The fields a process result has once the process ended. */
export type ProcessExitFields = {
  exit_code?: number | null;
  completion_reason?: "killed" | "lost";
  note?: string;
};

/** One entry of `process` list. */
export type ProcessListEntry = ProcessExitFields & {
  session_id: string;
  command: string;
  cwd: string;
  pid: number;
  started_at: string;
  uptime_seconds: number;
  status: ProcessStatus;
  output_preview: string;
};

/** `process`: one shape per action (list, poll, log, wait, kill, write/submit/keys, screen, resize, close). */
export type ProcessToolResult = Exclusive<
  | ToolErrorResult
  | PersistedToolResult
  | { processes: ProcessListEntry[] }
  | { status: "not_found"; error: string }
  | (ProcessExitFields & {
      session_id: string;
      command: string;
      status: ProcessStatus;
      pid: number;
      uptime_seconds: number;
      output_preview: string;
      stderr_note?: string;
    })
  | (ProcessExitFields & {
      session_id: string;
      status: ProcessStatus;
      output: string;
      total_lines: number;
      showing: string;
      log_note?: string;
      stderr_note?: string;
    })
  | (ProcessExitFields & {
      session_id: string;
      status: ProcessStatus | "timeout" | "interrupted" | "matched";
      output: string;
      timeout_note?: string;
    })
  | (ProcessExitFields & { status: "killed" | "already_exited"; session_id: string })
  | { status: "ok"; bytes_written: number }
  | {
      session_id: string;
      status: ProcessStatus;
      screen: string;
      cursor: { row: number; col: number };
      cols: number;
      rows: number;
    }
  | { status: "ok"; cols: number; rows: number }
  | { status: "ok"; note: string }
>;

/** `read_file`: a page of numbered lines, or why it was not read. Never persisted. */
export type ReadFileResult = Exclusive<
  | (ToolErrorResult & { similar_files?: string[]; path?: string; total_lines?: number; file_size?: number })
  | { path: string; content: string; total_lines: number; file_size: number; truncated: boolean; hint?: string }
  | { path: string; is_image: true; is_binary: true; file_size: number; hint: string }
  | { path: string; is_binary: true; file_size: number; error: string }
>;

/** `write_file`. */
export type WriteFileResult = Exclusive<
  | ToolErrorResult
  | {
      path: string;
      bytes_written: number;
      dirs_created: boolean;
      resolved_path?: string;
      line_endings?: string;
      bom?: string;
    }
>;

/** `patch`: replace mode (one file) or a V4A patch (several). */
export type PatchResult = Exclusive<
  | ToolErrorResult
  | { success: false; error: string }
  | { success: true; path: string; replacements: number; diff: string; match_strategy?: string }
  | {
      success: boolean;
      files_modified: string[];
      files_created: string[];
      files_deleted: string[];
      files_moved: string[];
      diff?: string;
      error?: string;
    }
>;

/** One line of `search_files` content mode (`context: true` for a line around a match). */
export type SearchMatch = { path: string; line: number; content: string; context?: true };

/** `search_files`: files, counts per file, or matching lines; `total_count` is the true total. */
export type SearchFilesResult = Exclusive<
  | ToolErrorResult
  | {
      total_count: number;
      files?: string[];
      counts?: { [path: string]: number };
      matches?: SearchMatch[];
      truncated?: true;
      hint?: string;
      engine?: string;
    }
>;

/** `execute_code`. */
export type ExecuteCodeResult = Exclusive<
  | ToolErrorResult
  | {
      status: "success" | "error" | "timeout" | "interrupted";
      output?: string;
      tool_calls_made: number;
      duration_seconds: number;
      error?: string;
    }
>;

/** `exec_command` and `write_stdin` (UNIFIED_EXEC_TOOLS): the output since the last reply. */
export type UnifiedExecResult = Exclusive<
  | ToolErrorResult
  | {
      output: string;
      wall_time: number;
      original_token_count?: number;
      /** While the command runs. */
      session_id?: string;
      /** Once it ended (null: no exit code could be learnt). */
      exit_code?: number | null;
      note?: string;
      error?: string;
    }
>;

/** A checkpoint as the `checkpoint` tool reports it. */
export interface CheckpointEntry {
  id: string;
  /** ISO 8601. */
  created_at: string;
  label?: string;
  /** "shell state only", or "shell state and the files under <root>". */
  holds: string;
  workspace_bytes?: number;
}

/** `checkpoint` (CHECKPOINT_TOOLS): what was made, listed, rolled back to or released. */
export type CheckpointToolResult = Exclusive<
  | ToolErrorResult
  | { checkpoint: CheckpointEntry }
  | { checkpoints: CheckpointEntry[] }
  | { rolled_back: CheckpointEntry; cwd: string }
  | { released: string }
>;

/** Tool name → its result type. */
export type ToolResults = {
  terminal: TerminalResult;
  process: ProcessToolResult;
  read_file: ReadFileResult;
  write_file: WriteFileResult;
  patch: PatchResult;
  search_files: SearchFilesResult;
  execute_code: ExecuteCodeResult;
  exec_command: UnifiedExecResult;
  write_stdin: UnifiedExecResult;
  checkpoint: CheckpointToolResult;
};

/** The tools of the registry (TOOLS): the names `callTool` and `handleToolCall` find without a `tools` list. */
export type RegistryToolName =
  "terminal" | "process" | "read_file" | "write_file" | "patch" | "search_files" | "execute_code";

/** The result of tool `Name`. */
export type ToolResultOf<Name extends keyof ToolResults> = ToolResults[Name];
