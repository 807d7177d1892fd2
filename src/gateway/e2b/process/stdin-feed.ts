/**
 * The open stdin of a process without a PTY. The process itself runs through
 * the session's `execute` (exec-driver.ts), whose output arrives whole
 * however fast it comes: a background process's log is bounded, and a
 * reader that fell behind lost the middle of a burst (E2B's stdin is a pipe
 * and loses nothing). Its stdin is a FIFO in a private directory of the
 * backend, fed by a `cat` that runs as one of the session's background
 * processes, so each write is one write to that process's stdin and a close
 * is its end of file.
 */

import type { Environment } from "../../../core/environment.js";
import { shellQuote } from "../../../core/quote.js";
import { spawn, type SpawnedProcess } from "../../../sdk/spawn.js";
import { stdinWriter } from "./stdin-writer.js";

/** The FIFO's directory: private to the backend's user, removed when the process ends. */
const MAKE_FIFO =
  'umask 077; d=$(command mktemp -d "${TMPDIR:-/tmp}/shellwright-e2b-stdin-XXXXXXXX") && command mkfifo "$d/in" && builtin echo "$d"';

export interface StdinFeed {
  /** The FIFO the process reads as its stdin. */
  readonly path: string;
  /**
   * A line for the start of the process's script, run once its stdin is open (the FIFO's open returns only when
   * both ends are): it removes the FIFO's directory, so nothing of it outlives the process, also when the
   * session closes before stop() can remove it.
   */
  readonly unlinkFirst: string;
  /** Writes bytes (UTF-8 text); false once its stdin was closed or the feed ended. */
  write(data: Uint8Array): Promise<boolean>;
  /** Its end of file, after what was written. */
  close(): Promise<boolean>;
  /** Ends the feeder and removes the FIFO (best effort, never throws). */
  stop(): void;
}

export async function openStdinFeed(session: Environment): Promise<StdinFeed> {
  const made = await session.execute(MAKE_FIFO, { isolated: true, timeoutMs: 10_000 });
  const dir = made.output.trim();
  if (made.exitCode !== 0 || !dir.startsWith("/"))
    throw new Error(
      `could not make a FIFO for the process's stdin (exit ${made.exitCode}): ${made.output.slice(0, 200)}`,
    );
  const path = `${dir}/in`;
  // A process that never opened its stdin leaves the directory to stop(); a session closed first (its sandbox
  // killed) takes it away while its commands still work.
  const unhook = session.beforeClose(() => removeDir(session, dir));
  let feeder: SpawnedProcess;
  try {
    // It blocks in the open until the process opens its end.
    feeder = await spawn(session, `exec cat > ${shellQuote(path)}`);
  } catch (error) {
    unhook();
    void removeDir(session, dir);
    throw error;
  }
  let stopped = false;
  return {
    path,
    unlinkFirst: `command rm -rf -- ${shellQuote(dir)}`,
    write: stdinWriter(feeder, () => !stopped),
    close: async () => {
      if (stopped) return false;
      await feeder.closeStdin();
      return true;
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      unhook();
      void feeder
        .signal("SIGKILL")
        .catch(() => undefined)
        .finally(() => removeDir(session, dir));
    },
  };
}

async function removeDir(session: Environment, dir: string): Promise<void> {
  await session
    .execute(`command rm -rf -- ${shellQuote(dir)}`, { isolated: true, timeoutMs: 10_000 })
    .catch(() => undefined);
}
