/** SendInput's bytes to a background process's stdin, which takes text (the process registry writes text). */

import { ProcessError } from "../../../core/errors.js";
import type { SpawnedProcess } from "../../../sdk/spawn.js";

/**
 * A writer of bytes to `handle`'s stdin: true once written, false when its stdin is no longer open (it ended, or
 * closed its stdin, or `open()` says no). One decoder for all writes: a character cut between two writes stays
 * whole.
 */
export function stdinWriter(
  handle: SpawnedProcess,
  open: () => boolean = () => true,
): (data: Uint8Array) => Promise<boolean> {
  const decoder = new TextDecoder();
  return async (data) => {
    if (!open() || handle.status !== "running") return false;
    const text = decoder.decode(data, { stream: true });
    if (text === "") return true; // the start of a character, kept for the next write
    try {
      await handle.write(text);
      return true;
    } catch (error) {
      // It ended (or closed its stdin) since the check: no open stdin, not an internal error.
      if (error instanceof ProcessError) return false;
      throw error;
    }
  };
}
