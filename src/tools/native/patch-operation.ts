/**
 * One operation of OpenAI's apply_patch (an `apply_patch_call`'s `operation`,
 * or an `Editor` call of the OpenAI Agents SDK): create, update or delete one
 * file, on the patch tool's file engine. Every check runs before anything is
 * written, so an operation that fails changes nothing; an update is written
 * atomically and only over the content it was computed from (a file changed
 * meanwhile is refused, never overwritten).
 */

import type { Environment } from "../../core/environment.js";
import { ConcurrentChangeError, probeForWrite, sha256, writeAtomic } from "../files/atomic-write.js";
import type { WriteGuardOptions } from "../files/path-guard.js";
import { encodeText, readForEdit, removeFile } from "../patch/patch-tool.js";
import { applyHunks, parseCreateDiff, parseUpdateDiff, V4aParseError } from "../patch/v4a.js";

export type PatchOperation =
  | { type: "create_file"; path: string; diff: string }
  | { type: "update_file"; path: string; diff: string; move_to?: string | undefined }
  | { type: "delete_file"; path: string };

/** What an `apply_patch_call_output` carries. */
export interface PatchOutcome {
  status: "completed" | "failed";
  output: string;
}

const failed = (message: string): PatchOutcome => ({
  status: "failed",
  output: `${message.replace(/\.$/, "")}. Nothing was changed.`,
});

export async function applyPatchOperation(
  session: Environment,
  operation: PatchOperation,
  guard: WriteGuardOptions,
  signal?: AbortSignal,
): Promise<PatchOutcome> {
  try {
    if (operation.type === "create_file") return await createFile(session, operation, guard, signal);
    if (operation.type === "update_file") return await updateFile(session, operation, guard, signal);
    return await deleteFile(session, operation.path, guard, signal);
  } catch (error) {
    if (error instanceof V4aParseError)
      return failed(`Invalid diff for ${operation.type} ${operation.path}: ${error.message}`);
    if (error instanceof ConcurrentChangeError) return failed(error.message);
    throw error;
  }
}

async function createFile(
  session: Environment,
  operation: { path: string; diff: string },
  guard: WriteGuardOptions,
  signal: AbortSignal | undefined,
): Promise<PatchOutcome> {
  const content = parseCreateDiff(operation.diff);
  const probe = await probeForWrite(session, operation.path, { guard, readAll: false, signal });
  if (probe.denied !== undefined) return failed(probe.denied);
  if (probe.kind === "dir") return failed(`${operation.path} is a directory`);
  if (probe.kind !== "new") {
    return failed(
      `${operation.path} already exists; create_file does not replace a file: change it with update_file, or delete it first`,
    );
  }
  await writeAtomic(session, probe.resolved, Buffer.from(content, "utf8"), { signal });
  return { status: "completed", output: `Created ${operation.path}` };
}

async function updateFile(
  session: Environment,
  operation: { path: string; diff: string; move_to?: string | undefined },
  guard: WriteGuardOptions,
  signal: AbortSignal | undefined,
): Promise<PatchOutcome> {
  const hunks = parseUpdateDiff(operation.diff);
  const read = await readForEdit(session, operation.path, guard, signal);
  if (typeof read === "string") return failed(read);
  const applied = applyHunks(read.file.text, hunks, operation.path);
  if (!applied.ok) return failed(applied.error);
  const bytes = encodeText(read.file, applied.text);
  if (operation.move_to === undefined || operation.move_to === operation.path) {
    await writeAtomic(session, read.probe.resolved, bytes, {
      mode: read.probe.mode,
      expectedSha256: sha256(read.probe.existing),
      signal,
    });
    return { status: "completed", output: `Updated ${operation.path}` };
  }
  const destination = await probeForWrite(session, operation.move_to, { guard, readAll: false, signal });
  if (destination.denied !== undefined) return failed(destination.denied);
  if (destination.kind !== "new") return failed(`${operation.move_to} already exists; a move does not replace it`);
  await writeAtomic(session, destination.resolved, bytes, { mode: read.probe.mode, signal });
  await removeFile(session, read.probe.resolved, signal);
  return { status: "completed", output: `Updated ${operation.path} and moved it to ${operation.move_to}` };
}

async function deleteFile(
  session: Environment,
  path: string,
  guard: WriteGuardOptions,
  signal: AbortSignal | undefined,
): Promise<PatchOutcome> {
  const probe = await probeForWrite(session, path, { guard, readAll: false, signal });
  if (probe.denied !== undefined) return failed(probe.denied);
  if (probe.kind === "new") return failed(`File not found: ${path}`);
  if (probe.kind !== "file") return failed(`${path} is not a regular file`);
  await removeFile(session, probe.resolved, signal);
  return { status: "completed", output: `Deleted ${path}` };
}
