/**
 * patch: targeted edits. `replace` swaps one string for another through the
 * fuzzy strategy chain; `patch` applies a V4A multi-file patch, validated
 * whole (every file read, every hunk found) before any file changes. Files are
 * read whole (any length), written atomically, verified on disk, and the
 * result carries a unified diff.
 */

import { z } from "zod";
import type { Environment } from "../../core/environment.js";
import { defineTool, type ToolDefinition, type ToolResult } from "../shared/tool-definition.js";
import { parseFramed, runOnBackend, shellQuote } from "../shared/backend-io.js";
import { ConcurrentChangeError, probeForWrite, sha256, writeAtomic, type WriteProbe } from "../files/atomic-write.js";
import { validateGuardOptions, type WriteGuardOptions } from "../files/path-guard.js";
import { baseNameOf, directoryOf, enterVerifiedDirectory } from "../files/verified-directory.js";
import { fuzzyReplace, STRATEGY_NAMES } from "./fuzzy-match.js";
import { diffPath, unifiedDiff } from "./unified-diff.js";
import { applyHunks, parseV4a, V4aParseError, type V4aOperation } from "./v4a.js";

export type PatchToolOptions = WriteGuardOptions;

const NOT_FOUND_HINT =
  "\n\n[Hint: old_string not found. Use read_file to verify the current content, or search_files to locate the text.]";

const schema = z
  .object({
    mode: z
      .enum(["replace", "patch"])
      .default("replace")
      .describe("replace: swap old_string for new_string in one file. patch: apply a V4A multi-file patch."),
    path: z.string().optional().describe("replace mode: the file to edit."),
    old_string: z
      .string()
      .optional()
      .describe("replace mode: the text to find; include enough surrounding lines to make it unique."),
    new_string: z.string().optional().describe("replace mode: the text to put in its place (may be empty to delete)."),
    replace_all: z
      .boolean()
      .default(false)
      .describe("replace mode: replace every match instead of requiring a unique one."),
    patch: z.string().optional().describe("patch mode: the V4A patch, from *** Begin Patch to *** End Patch."),
  })
  // Unknown arguments are refused (runTool names them): one ignored silently could change what the call does.
  .strict();

/** A file's text as edited: LF line endings, no BOM; restored on the way back. */
export interface TextFile {
  text: string;
  crlf: boolean;
  bom: boolean;
}

export function decodeText(bytes: Buffer, path: string): TextFile | string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return `'${path}' is not UTF-8 text; patch edits text files only (use write_file or the terminal).`;
  }
  if (text.includes("\0")) return `'${path}' looks binary (it contains NUL bytes); patch edits text files only.`;
  const bom = text.startsWith("\uFEFF");
  if (bom) text = text.slice(1);
  const crlf = text.includes("\r\n");
  if (crlf) text = text.replace(/\r\n/g, "\n");
  return { text, crlf, bom };
}

export function encodeText(file: TextFile, text: string): Buffer {
  let out = file.crlf ? text.replace(/\n/g, "\r\n") : text;
  if (file.bom) out = `\uFEFF${out}`;
  return Buffer.from(out, "utf8");
}

export async function readForEdit(
  session: Environment,
  path: string,
  guard: WriteGuardOptions,
  signal?: AbortSignal,
): Promise<{ probe: WriteProbe; file: TextFile } | string> {
  const probe = await probeForWrite(session, path, { guard, readAll: true, signal });
  if (probe.denied !== undefined) return probe.denied;
  if (probe.kind === "new") return `File not found: ${path}`;
  if (probe.kind !== "file") return `'${path}' is not a regular file.`;
  const file = decodeText(probe.existing, path);
  return typeof file === "string" ? file : { probe, file };
}

async function replaceMode(
  session: Environment,
  input: { path: string; old_string: string; new_string: string; replace_all: boolean },
  guard: WriteGuardOptions,
  signal?: AbortSignal,
): Promise<ToolResult> {
  const read = await readForEdit(session, input.path, guard, signal);
  if (typeof read === "string") return { error: read };
  const { probe, file } = read;
  const lf = (s: string): string => s.replace(/\r\n/g, "\n");
  const outcome = fuzzyReplace(file.text, lf(input.old_string), lf(input.new_string), input.replace_all);
  if (!outcome.ok)
    return { error: outcome.error.startsWith("Could not find") ? outcome.error + NOT_FOUND_HINT : outcome.error };
  const bytes = encodeText(file, outcome.content);
  try {
    await writeAtomic(session, probe.resolved, bytes, {
      mode: probe.mode,
      expectedSha256: sha256(probe.existing),
      signal,
    });
  } catch (error) {
    if (error instanceof ConcurrentChangeError) return { success: false, error: `${error.message}.` };
    throw error;
  }
  const result: ToolResult = {
    success: true,
    path: input.path,
    replacements: outcome.count,
    diff: unifiedDiff(file.text, outcome.content, input.path),
  };
  if (outcome.strategy !== "exact") result.match_strategy = outcome.strategy;
  return result;
}

interface Planned {
  op: V4aOperation;
  /** Resolved source path (and destination for moves). */
  source: WriteProbe;
  destination?: WriteProbe;
  /** New bytes for update/add. */
  bytes?: Buffer;
  diff: string;
}

async function patchMode(
  session: Environment,
  patch: string,
  guard: WriteGuardOptions,
  signal?: AbortSignal,
): Promise<ToolResult> {
  let operations: V4aOperation[];
  try {
    operations = parseV4a(patch);
  } catch (error) {
    if (error instanceof V4aParseError)
      return { success: false, error: `Invalid V4A patch: ${error.message}. Nothing was changed.` };
    throw error;
  }

  // Phase 1: read and check everything; nothing is written unless every operation can be applied.
  const problems: string[] = [];
  const planned: Planned[] = [];
  const touched = new Set<string>();
  const claim = (probe: WriteProbe, label: string): void => {
    if (touched.has(probe.resolved)) problems.push(`${label}: the patch touches '${probe.resolved}' more than once`);
    touched.add(probe.resolved);
  };
  const destinationProbe = async (path: string): Promise<WriteProbe | undefined> => {
    const probe = await probeForWrite(session, path, { guard, readAll: false, signal });
    if (probe.denied !== undefined) problems.push(probe.denied);
    else if (probe.kind !== "new")
      problems.push(`${path}: already exists; a patch does not overwrite it (use *** Update File)`);
    else return probe;
    return undefined;
  };

  for (const op of operations) {
    if (op.kind === "update") {
      const read = await readForEdit(session, op.path, guard, signal);
      if (typeof read === "string") {
        problems.push(read);
        continue;
      }
      const applied = applyHunks(read.file.text, op.hunks, op.path);
      if (!applied.ok) {
        problems.push(applied.error);
        continue;
      }
      claim(read.probe, op.path);
      const entry: Planned = {
        op,
        source: read.probe,
        bytes: encodeText(read.file, applied.text),
        diff: unifiedDiff(read.file.text, applied.text, op.moveTo ?? op.path),
      };
      if (op.moveTo !== undefined) {
        const destination = await destinationProbe(op.moveTo);
        if (!destination) continue;
        claim(destination, op.moveTo);
        entry.destination = destination;
      }
      planned.push(entry);
    } else if (op.kind === "add") {
      const destination = await destinationProbe(op.path);
      if (!destination) continue;
      claim(destination, op.path);
      planned.push({
        op,
        source: destination,
        bytes: Buffer.from(op.content, "utf8"),
        diff: unifiedDiff("", op.content, op.path),
      });
    } else {
      const probe = await probeForWrite(session, op.path, { guard, readAll: false, signal });
      if (probe.denied !== undefined) problems.push(probe.denied);
      else if (probe.kind !== "file")
        problems.push(`${op.path}: ${probe.kind === "new" ? "file not found" : "not a regular file"}`);
      else {
        claim(probe, op.path);
        if (op.kind === "delete")
          planned.push({ op, source: probe, diff: `--- ${diffPath("a", op.path)}\n+++ /dev/null\n` });
        else {
          const destination = await destinationProbe(op.moveTo);
          if (!destination) continue;
          claim(destination, op.moveTo);
          planned.push({ op, source: probe, destination, diff: `rename from ${op.path}\nrename to ${op.moveTo}\n` });
        }
      }
    }
  }
  if (problems.length > 0) return { success: false, error: `${problems.join("; ")}. Nothing was changed.` };

  // Phase 2: apply.
  const result = {
    files_modified: [] as string[],
    files_created: [] as string[],
    files_deleted: [] as string[],
    files_moved: [] as string[],
  };
  const done: string[] = [];
  try {
    for (const step of planned) {
      const { op } = step;
      if (op.kind === "update") {
        const target = step.destination ?? step.source;
        await writeAtomic(session, target.resolved, step.bytes!, {
          mode: step.source.mode,
          ...(step.destination ? {} : { expectedSha256: sha256(step.source.existing) }),
          signal,
        });
        if (step.destination) {
          await removeFile(session, step.source.resolved, signal);
          result.files_moved.push(`${op.path} -> ${op.moveTo}`);
        } else result.files_modified.push(op.path);
      } else if (op.kind === "add") {
        await writeAtomic(session, step.source.resolved, step.bytes!, { signal });
        result.files_created.push(op.path);
      } else if (op.kind === "delete") {
        await removeFile(session, step.source.resolved, signal);
        result.files_deleted.push(op.path);
      } else {
        await moveFile(session, step.source.resolved, step.destination!.resolved, signal);
        result.files_moved.push(`${op.path} -> ${op.moveTo}`);
      }
      done.push(op.path);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const applied = done.length > 0 ? ` Already applied: ${done.join(", ")}.` : " Nothing was changed.";
    return {
      success: false,
      ...result,
      error: `${error instanceof ConcurrentChangeError ? "" : "Applying the patch failed: "}${message}.${applied}`,
    };
  }
  return { success: true, ...result, diff: planned.map((p) => p.diff).join("") };
}

/** Deletes inside the directory the guard approved (see verified-directory.ts), never through a swapped-in symlink. */
export async function removeFile(session: Environment, resolved: string, signal?: AbortSignal): Promise<void> {
  const script = [
    enterVerifiedDirectory(directoryOf(resolved), { create: false }),
    `rm -f -- ${shellQuote(`./${baseNameOf(resolved)}`)}`,
  ].join("\n");
  const result = await runOnBackend(session, script, { signal });
  const moved = parseFramed(result.stdout).fields.get("moved");
  if (moved !== undefined)
    throw new ConcurrentChangeError(`the directory of '${resolved}' was replaced (it now leads to '${moved}')`);
  if (result.exitCode !== 0) throw new Error(`could not delete '${resolved}': ${result.stderr.trim()}`);
}

/**
 * Renames into the destination directory the guard approved, entered and
 * proven first; the source directory is checked just before the rename.
 */
async function moveFile(session: Environment, from: string, to: string, signal?: AbortSignal): Promise<void> {
  const source = directoryOf(from);
  const script = [
    `[ "$(builtin cd -P -- ${shellQuote(source)} 2>/dev/null && builtin pwd -P)" = ${shellQuote(source)} ] || { builtin printf 'moved %s\\n' ${shellQuote(source)}; exit 0; }`,
    enterVerifiedDirectory(directoryOf(to), { create: true }),
    `mv -T -- ${shellQuote(from)} ${shellQuote(`./${baseNameOf(to)}`)}`,
  ].join("\n");
  const result = await runOnBackend(session, script, { signal });
  const moved = parseFramed(result.stdout).fields.get("moved");
  if (moved !== undefined)
    throw new ConcurrentChangeError(
      `a directory on the way from '${from}' to '${to}' was replaced (it now leads to '${moved}')`,
    );
  if (result.exitCode !== 0) throw new Error(`could not move '${from}' to '${to}': ${result.stderr.trim()}`);
}

export function createPatchTool(options: PatchToolOptions = {}): ToolDefinition<typeof schema> {
  validateGuardOptions(options);
  return defineTool({
    name: "patch",
    description:
      "Edit files without rewriting them. mode='replace' (default): replace old_string with new_string in `path`; old_string must match once " +
      "(or set replace_all=true). Near misses are still found by a chain of " +
      `${STRATEGY_NAMES.length} matching strategies, tried from strict to loose (${STRATEGY_NAMES.join(", ")}); an ambiguous match is refused. ` +
      "mode='patch': apply a V4A patch ('*** Begin Patch' … '*** End Patch' with '*** Update File: p' + '@@' hunks of ' '/'-'/'+' lines, " +
      "'*** Add File: p', '*** Delete File: p', '*** Move File: a -> b'); every operation is checked before any file changes. " +
      "Line endings and BOM are kept; the result includes a unified diff.",
    inputSchema: schema,
    async handler(input, { session, signal }): Promise<ToolResult> {
      if (input.mode === "patch") {
        if (input.patch === undefined || input.patch.trim() === "")
          return { error: "mode='patch' needs the `patch` argument (the V4A patch text)." };
        return patchMode(session, input.patch, options, signal);
      }
      const missing = (["path", "old_string", "new_string"] as const).filter((key) => input[key] === undefined);
      if (missing.length > 0) return { error: `mode='replace' needs ${missing.join(", ")}.` };
      return replaceMode(
        session,
        {
          path: input.path!,
          old_string: input.old_string!,
          new_string: input.new_string!,
          replace_all: input.replace_all,
        },
        options,
        signal,
      );
    },
  });
}

export const patchTool = createPatchTool();
