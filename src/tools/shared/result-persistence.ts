/**
 * Tool-result persistence, in three layers:
 *
 * 1. each tool caps its own output (the terminal keeps head + tail inline and
 *    saves the whole output when it cuts, see terminal/terminal-tool.ts);
 * 2. `persistLargeResult`: a result longer than its tool's threshold is saved
 *    into the backend and replaced by a preview that says where the rest is;
 * 3. `enforceTurnBudget`: after one turn of tool calls, the largest results
 *    are persisted until the turn fits its budget.
 *
 * Results are written through the session (the data on stdin, never on a
 * command line, so any size works) and fall back to a host directory when the
 * write inside the backend fails. `read_file` results are never persisted: the model can
 * already read that file in pieces, and persisting would loop.
 */

import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import type { Environment } from "../../core/environment.js";
import { shellQuote } from "../../core/script.js";
import { DEFAULT_TOOL_SETTINGS, type ToolSettings } from "./tool-settings.js";
import type { ToolResult } from "./tool-definition.js";

/** Tools whose results are never persisted. */
export const NEVER_PERSISTED: readonly string[] = ["read_file"];

export interface SavedText {
  path: string;
  /** "backend": inside the backend, where the model's tools can read it; "host": the fallback on this machine. */
  where: "backend" | "host";
  /** Why the write inside the backend failed, when it did. */
  backendError?: string;
}

export interface SaveOptions {
  /** Names the file (a tool call id); made safe for a file name. @default random */
  id?: string;
  settings?: ToolSettings;
}

/**
 * Where a session's results go inside the backend: next to its snapshot, in a
 * directory named after the session (mode 0700), so that on a shared /tmp no
 * one can create it first.
 */
export function resultsDir(session: Environment): string {
  return `${posix.dirname(session.paths.snapshot)}/shellwright-results-${session.id}`;
}

/**
 * Saves `text` into the backend through the session, or into the host results
 * directory when that fails. Undefined when both fail.
 */
export async function saveText(
  session: Environment,
  text: string,
  options: SaveOptions = {},
): Promise<SavedText | undefined> {
  const name = `${safeName(options.id) ?? randomBytes(8).toString("hex")}.txt`;
  const dir = resultsDir(session);
  const path = `${dir}/${name}`;
  const bytes = Buffer.byteLength(text, "utf8");
  let backendError: string;
  try {
    // The byte count written back proves the whole text arrived.
    const result = await session.execute(
      `builtin umask 077 && command mkdir -p ${shellQuote(dir)} && command cat > ${shellQuote(path)} && command wc -c < ${shellQuote(path)}`,
      { stdin: text, isolated: true, timeoutMs: 60_000 },
    );
    const written = Number(result.output.trim());
    if (result.exitCode === 0 && written === bytes) return { path, where: "backend" };
    backendError =
      result.exitCode === 0
        ? `${written} of ${bytes} bytes were written`
        : `exit code ${result.exitCode}: ${result.output.trim().slice(0, 200)}`;
  } catch (error) {
    backendError = error instanceof Error ? error.message : String(error);
  }
  const hostDir =
    options.settings?.hostResultsDir ?? join(tmpdir(), `shellwright-results-${process.getuid?.() ?? "user"}`);
  try {
    mkdirSync(hostDir, { recursive: true, mode: 0o700 });
    // Results may hold secrets: only into a real directory of ours that no one else can read.
    const stat = lstatSync(hostDir);
    if (
      !stat.isDirectory() ||
      (process.getuid !== undefined && stat.uid !== process.getuid()) ||
      (stat.mode & 0o077) !== 0
    )
      return undefined;
    const hostPath = join(hostDir, name);
    writeFileSync(hostPath, text, { mode: 0o600 });
    return { path: hostPath, where: "host", backendError };
  } catch {
    return undefined;
  }
}

/** The first `limit` characters, cut back to a line end when one falls in the second half. */
export function previewOf(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const head = text.slice(0, limit);
  const newline = head.lastIndexOf("\n");
  return newline > limit / 2 ? head.slice(0, newline) : head;
}

function formatSize(chars: number): string {
  return chars >= 1024 * 1024 ? `${(chars / (1024 * 1024)).toFixed(1)} MB` : `${(chars / 1024).toFixed(1)} KB`;
}

/** Where the full text is, said so that a model knows how to get at it. */
export function locationNote(saved: SavedText, session: Environment): string {
  if (saved.where === "backend" || session.sharesHostFiles) {
    return `Full output saved to: ${saved.path}\nUse the read_file tool with offset and limit to access specific sections of this output.`;
  }
  return `Full output saved on the host, outside the backend (writing it into the backend failed: ${saved.backendError ?? "unknown error"}): ${saved.path}\nThe tools cannot read it there; ask the user if you need more than this preview.`;
}

/** The text that replaces a persisted result (the format hermes-trained models know). */
export function persistedMessage(
  text: string,
  saved: SavedText | undefined,
  session: Environment,
  previewChars: number,
): string {
  const preview = previewOf(text, previewChars);
  if (saved === undefined) {
    return `${preview}\n\n[Truncated: tool response was ${text.length.toLocaleString("en-US")} chars. Full output could not be saved in the backend or on the host.]`;
  }
  return [
    "<persisted-output>",
    `This tool result was too large (${text.length.toLocaleString("en-US")} characters, ${formatSize(text.length)}).`,
    locationNote(saved, session),
    "",
    `Preview (first ${preview.length} chars):`,
    preview,
    ...(preview.length < text.length ? ["..."] : []),
    "</persisted-output>",
  ].join("\n");
}

export const resultSize = (result: ToolResult): number => JSON.stringify(result).length;

export function isPersisted(result: ToolResult): boolean {
  return Object.values(result).some((value) => typeof value === "string" && value.startsWith("<persisted-output>"));
}

/** The threshold for `toolName`: Infinity for read_file, then the per-tool setting, then the default. */
export function thresholdFor(toolName: string, settings: ToolSettings = DEFAULT_TOOL_SETTINGS): number {
  if (NEVER_PERSISTED.includes(toolName)) return Infinity;
  return settings.toolThresholdChars[toolName] ?? settings.resultThresholdChars;
}

export interface PersistContext {
  session: Environment;
  settings?: ToolSettings;
  /** The tool call's id, to name the file. */
  callId?: string;
}

/**
 * Persists a result now: its largest string field (the output or content)
 * is saved and replaced by the preview; the other fields (exit code, status)
 * stay as they are. A result without a string field is saved as JSON.
 */
export async function persistResult(result: ToolResult, context: PersistContext): Promise<ToolResult> {
  const settings = context.settings ?? DEFAULT_TOOL_SETTINGS;
  let field: string | undefined;
  for (const [key, value] of Object.entries(result)) {
    if (typeof value === "string" && (field === undefined || value.length > (result[field] as string).length))
      field = key;
  }
  const text = field === undefined ? JSON.stringify(result, null, 2) : (result[field] as string);
  const saved = await saveText(context.session, text, {
    ...(context.callId === undefined ? {} : { id: context.callId }),
    settings,
  });
  const message = persistedMessage(text, saved, context.session, settings.previewChars);
  return field === undefined ? { output: message } : { ...result, [field]: message };
}

/** Layer 2: persists `result` when it is longer than its tool's threshold; otherwise returns it unchanged. */
export async function persistLargeResult(
  toolName: string,
  result: ToolResult,
  context: PersistContext,
): Promise<ToolResult> {
  if (isPersisted(result) || resultSize(result) <= thresholdFor(toolName, context.settings)) return result;
  return persistResult(result, context);
}

export interface TurnResult {
  toolName: string;
  callId?: string;
  result: ToolResult;
}

/**
 * Layer 3: when the results of one turn add up to more than the budget,
 * persists the largest (not yet persisted, not read_file) until the sum fits.
 * Returns a new array; the input is not changed.
 */
export async function enforceTurnBudget(
  results: readonly TurnResult[],
  context: Omit<PersistContext, "callId">,
): Promise<TurnResult[]> {
  const settings = context.settings ?? DEFAULT_TOOL_SETTINGS;
  const out = results.map((entry) => ({ ...entry }));
  const sizes = out.map((entry) => resultSize(entry.result));
  let total = sizes.reduce((sum, size) => sum + size, 0);
  const candidates = out
    .map((entry, index) => ({ entry, index }))
    .filter(({ entry }) => !NEVER_PERSISTED.includes(entry.toolName) && !isPersisted(entry.result))
    .sort((a, b) => sizes[b.index]! - sizes[a.index]! || a.index - b.index);
  for (const { entry, index } of candidates) {
    if (total <= settings.turnBudgetChars) break;
    entry.result = await persistResult(entry.result, {
      ...context,
      ...(entry.callId === undefined ? {} : { callId: entry.callId }),
    });
    const size = resultSize(entry.result);
    total += size - sizes[index]!;
    sizes[index] = size;
  }
  return out;
}

function safeName(id: string | undefined): string | undefined {
  if (id === undefined) return undefined;
  const safe = id.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 100);
  return safe === "" || safe.startsWith(".") ? `r${safe}` : safe;
}
