/**
 * What the helper says on stderr: why it failed (kept for the warning that
 * drops the fast path) and, in debug mode, its log. Debug mode is
 * `SHELLWRIGHT_FAST_PATH_DEBUG=1` (the log goes to this process's stderr) or
 * a file path (appended there).
 */

import { appendFileSync } from "node:fs";
import type { Readable } from "node:stream";
import { writeStderr } from "../../../core/stderr.js";

const TAIL_BYTES = 2048;

function debugTarget(): string | undefined {
  const value = process.env.SHELLWRIGHT_FAST_PATH_DEBUG;
  return value === undefined || value === "" || value === "0" ? undefined : value;
}

/** The helper's flags: its text mode, and its debug log when asked for. */
export function helperFlags(text: boolean): string[] {
  return [...(text ? ["-t"] : []), ...(debugTarget() === undefined ? [] : ["-v"])];
}

/**
 * Passes what a helper said on stderr on to the debug log, when there is
 * one: every backend's helper (local, docker, ssh, a box) logs the same way.
 */
export function passOnDebugLog(chunk: Buffer | string): void {
  const target = debugTarget();
  if (target === undefined || chunk.length === 0) return;
  if (target === "1") writeStderr(chunk);
  else
    try {
      appendFileSync(target, chunk, { mode: 0o600 });
    } catch {
      // a log that cannot be written is not the session's failure
    }
}

/** Keeps the last 2 KiB the helper wrote on stderr (and passes its debug log on); returns the reader of the tail. */
export function keepStderrTail(stream: Readable | null | undefined): () => string {
  let tail = "";
  stream?.on("data", (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-TAIL_BYTES);
    passOnDebugLog(chunk);
  });
  stream?.on("error", () => undefined);
  (stream as unknown as { unref?(): void } | null | undefined)?.unref?.();
  return () => tail;
}
