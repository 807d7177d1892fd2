/**
 * What the helper says on stderr: why it failed (kept for the warning that
 * drops the fast path) and, in debug mode, its log. Debug mode is
 * `SHELLWRIGHT_FAST_PATH_DEBUG=1` (the log goes to this process's stderr) or
 * a file path (appended there).
 */

import { appendFileSync } from "node:fs";
import type { Readable } from "node:stream";

const TAIL_BYTES = 2048;

function debugTarget(): string | undefined {
  const value = process.env.SHELLWRIGHT_FAST_PATH_DEBUG;
  return value === undefined || value === "" || value === "0" ? undefined : value;
}

/** The helper's flags: its text mode, and its debug log when asked for. */
export function helperFlags(text: boolean): string[] {
  return [...(text ? ["-t"] : []), ...(debugTarget() === undefined ? [] : ["-v"])];
}

/** Keeps the last 2 KiB the helper wrote on stderr (and passes its debug log on); returns the reader of the tail. */
export function keepStderrTail(stream: Readable | null | undefined): () => string {
  let tail = "";
  const target = debugTarget();
  stream?.on("data", (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-TAIL_BYTES);
    if (target === undefined) return;
    if (target === "1") process.stderr.write(chunk);
    else
      try {
        appendFileSync(target, chunk, { mode: 0o600 });
      } catch {
        // a log that cannot be written is not the session's failure
      }
  });
  stream?.on("error", () => undefined);
  (stream as unknown as { unref?(): void } | null | undefined)?.unref?.();
  return () => tail;
}
