/**
 * Vitest global setup for machines whose login profile runs `pyenv init`
 * (root's, on these machines): its rehash takes a lock file, and a login
 * shell SIGKILLed mid-rehash (tests kill trees on purpose) leaves it. Every
 * later `bash -l` then waits PYENV_REHASH_TIMEOUT seconds (vitest.config.ts
 * bounds it) before going on, which slowed a whole run many times over. A
 * rehash holds the lock for well under a second: one older than 10 s is
 * stale, and is removed. Nothing else on the machine is touched.
 */

import { rmSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const STALE_MS = 10_000;

export default function setup(): () => void {
  const lock = join(process.env.PYENV_ROOT ?? join(homedir(), ".pyenv"), "shims", ".pyenv-shim");
  const timer = setInterval(() => {
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_MS) rmSync(lock, { force: true });
    } catch {
      // no lock: nothing to do
    }
  }, 2000);
  timer.unref();
  return () => clearInterval(timer);
}
