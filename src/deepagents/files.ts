/**
 * deepagents' file operations on the file tools' engine: uploads are atomic,
 * verified writes (parent directories made, protected paths refused),
 * downloads are byte-exact, and an edit is written only over the content it
 * was computed from. Results and error texts are those deepagents' own
 * BaseSandbox gives, so its tools and tests read them the same way.
 */

import type { EditResult, FileDownloadResponse, FileOperationError, FileUploadResponse } from "deepagents";
import type { Environment } from "../core/environment.js";
import { ConcurrentChangeError, probeForWrite, sha256, writeAtomic } from "../tools/files/atomic-write.js";
import type { WriteGuardOptions } from "../tools/files/path-guard.js";
import { quotePath, runOnBackend } from "../tools/shared/backend-io.js";

const MISSING = 20;
const DIRECTORY = 21;
const UNREADABLE = 22;

const validPath = (path: unknown): path is string => typeof path === "string" && path !== "" && !/[\n\0]/.test(path);

const failure = (error: unknown): FileOperationError =>
  /permission denied|read-only file system|operation not permitted/i.test(
    error instanceof Error ? error.message : String(error),
  )
    ? "permission_denied"
    : "invalid_path";

export async function uploadFile(
  session: Environment,
  path: string,
  content: Uint8Array,
  guard: WriteGuardOptions,
): Promise<FileUploadResponse> {
  if (!validPath(path)) return { path, error: "invalid_path" };
  try {
    const probe = await probeForWrite(session, path, { guard, readAll: false });
    if (probe.denied !== undefined) return { path, error: "permission_denied" };
    if (probe.kind === "dir") return { path, error: "is_directory" };
    if (probe.kind === "special") return { path, error: "invalid_path" };
    await writeAtomic(session, probe.resolved, content, { mode: probe.mode });
    return { path, error: null };
  } catch (error) {
    return { path, error: failure(error) };
  }
}

export async function downloadFile(session: Environment, path: string): Promise<FileDownloadResponse> {
  if (!validPath(path)) return { path, content: null, error: "invalid_path" };
  const producer = [
    `__sw_p=${quotePath(path)}`,
    `[ -e "$__sw_p" ] || exit ${MISSING}; [ -d "$__sw_p" ] && exit ${DIRECTORY}; [ -r "$__sw_p" ] || exit ${UNREADABLE}`,
    `command cat -- "$__sw_p"`,
  ].join("\n");
  try {
    const result = await runOnBackend(session, producer);
    if (result.exitCode === 0) return { path, content: new Uint8Array(result.stdout), error: null };
    const error: FileOperationError =
      result.exitCode === MISSING
        ? "file_not_found"
        : result.exitCode === DIRECTORY
          ? "is_directory"
          : result.exitCode === UNREADABLE
            ? "permission_denied"
            : failure(result.stderr);
    return { path, content: null, error };
  } catch (error) {
    return { path, content: null, error: failure(error) };
  }
}

/** BaseSandbox's edit, its semantics and texts, read and written on the file engine. */
export async function editFile(
  session: Environment,
  path: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
  guard: WriteGuardOptions,
): Promise<EditResult> {
  if (!validPath(path)) return { error: `Error: invalid path ${JSON.stringify(path)}` };
  const probe = await probeForWrite(session, path, { guard, readAll: true });
  if (probe.denied !== undefined) return { error: `Error: ${probe.denied}` };
  if (probe.kind === "new") return { error: `Error: File '${path}' not found` };
  if (probe.kind !== "file") return { error: `Error: '${path}' is not a regular file` };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(probe.existing);
  } catch {
    return { error: `Error: '${path}' is not UTF-8 text; it cannot be edited` };
  }
  let updated: string;
  let occurrences: number;
  if (oldString === "") {
    if (text !== "") return { error: "oldString must not be empty unless the file is empty" };
    if (newString === "") return { path, filesUpdate: null, occurrences: 0 };
    [updated, occurrences] = [newString, 1];
  } else {
    const first = text.indexOf(oldString);
    if (first === -1) return { error: `String not found in file '${path}'` };
    if (oldString === newString) return { path, filesUpdate: null, occurrences: 1 };
    occurrences = text.split(oldString).length - 1;
    if (occurrences > 1 && !replaceAll)
      return { error: `Multiple occurrences found in '${path}'. Use replaceAll=true to replace all.` };
    updated = replaceAll
      ? text.split(oldString).join(newString)
      : text.slice(0, first) + newString + text.slice(first + oldString.length);
  }
  try {
    await writeAtomic(session, probe.resolved, Buffer.from(updated, "utf8"), {
      mode: probe.mode,
      expectedSha256: sha256(probe.existing),
    });
  } catch (error) {
    if (error instanceof ConcurrentChangeError) return { error: `Error: ${error.message}` };
    return { error: `Failed to write edited file '${path}': ${failure(error)}` };
  }
  return { path, filesUpdate: null, occurrences };
}
