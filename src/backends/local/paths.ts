/**
 * Where the local backend finds bash and keeps its session directories.
 */

import { accessSync, constants as fsConstants } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { SpawnError } from "../../core/errors.js";

/**
 * How a sandboxed session's own state dir is named (the name of a directory bound into the sandbox cannot be
 * changed from inside it): its commands can write in it, so `--prune` takes no process group from it.
 */
export const SANDBOX_DIR_PREFIX = "shellwright-sandbox-";

/**
 * Every call rewrites the snapshot. On a disk filesystem each truncate-and-write
 * costs about as much as the rest of the wrapper (measured here: 0.1–0.2 ms per
 * dump on ext4 against 0.01–0.03 ms on tmpfs), so prefer a RAM-backed directory.
 */
export function fastTempRoot(): string {
  return stateRoots()[0]!;
}

/**
 * The directories a session's state dir may be made in, RAM-backed first,
 * the OS temp dir last (always listed). Whether programs can run in one is
 * state-dir.ts's question.
 */
export function stateRoots(): string[] {
  const usable = [process.env.XDG_RUNTIME_DIR, "/dev/shm"].filter((dir): dir is string => {
    if (dir === undefined || dir === "") return false;
    try {
      accessSync(dir, fsConstants.W_OK | fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  const last = tmpdir();
  return [...new Set(usable.filter((dir) => dir !== last)), last];
}

export function findBash(): string {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter(Boolean);
  for (const dir of [...dirs, "/usr/bin", "/bin"]) {
    const candidate = join(dir, "bash");
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  throw new SpawnError("bash was not found on PATH, /usr/bin or /bin; install bash or pass bashPath", {
    backend: "local",
  });
}
