/** A background process's stdin (its terminal, for a PTY process), written and closed through the backend. */

import type { Environment } from "../../core/environment.js";
import type { ProcessChannel } from "../../core/process-channel.js";
import { ProcessError } from "../../core/errors.js";
import type { BackgroundProcess } from "./background-process.js";
import { HOUSEKEEPING } from "./housekeeping.js";
import { closeStdinScript, writeStdinScript } from "./process-scripts.js";

/** Each process's last stdin step: writes and the close run in the order they were asked for. */
const lastStep = new WeakMap<BackgroundProcess, Promise<unknown>>();

/**
 * Runs `step` once every stdin step asked for before it is over: a write not awaited and then the close must not
 * be overtaken by the close (the write then lost, refused as closed), nor one write by the next (a PTY's keystrokes
 * and the emulator's answers), whichever route each takes (the helper's channel or `execute`).
 */
export function inStdinOrder<T>(process: BackgroundProcess, step: () => Promise<T>): Promise<T> {
  const done = (lastStep.get(process) ?? Promise.resolve()).then(step);
  lastStep.set(
    process,
    done.catch(() => undefined),
  );
  return done;
}

/** How long a write may wait for the process to read its input (its pipe full). */
export const STDIN_WRITE_TIMEOUT_MS = 10_000;

/**
 * Writes `data` to the process's stdin. Returns false when its stdin is closed or it has ended. With `channel`
 * (the session's helper attached to it, output-stream.ts) the bytes go as one message, no command started; the
 * `execute` route takes a write none of which the channel took (the process's stdin not open yet, the channel gone).
 */
export async function writeStdin(
  session: Environment,
  process: BackgroundProcess,
  data: string,
  channel?: ProcessChannel,
  timeoutMs = STDIN_WRITE_TIMEOUT_MS,
): Promise<boolean> {
  if (!process.stdinOpen || process.status !== "running") return false;
  if (channel !== undefined) {
    const result = await withDeadline(channel.write(Buffer.from(data)), timeoutMs);
    // Only a write none of which went in takes the `execute` route: "closed" may come after part of it (a long
    // write's first pieces, a pipe that broke mid-write, the channel lost while the helper held it).
    if (result !== "notReady") return result === "written";
  }
  const result = await session.execute(writeStdinScript(process.files), { ...HOUSEKEEPING, timeoutMs, stdin: data });
  if (result.exitCode === 0) return true;
  if (result.exitCode === 3) process.stdinOpen = false;
  if (result.timedOut) throw notReading(timeoutMs);
  return false;
}

const notReading = (timeoutMs: number, held = false): ProcessError =>
  new ProcessError(
    `Writing to the process's stdin timed out after ${timeoutMs} ms: it is not reading its input (its pipe buffer ` +
      `is full). The process runs on${held ? "; this input goes in once it reads, and no other until then" : ""}.`,
  );

/**
 * The channel's write, or a ProcessError once the deadline passed: the helper keeps the bytes and writes them as
 * the process reads (there is no taking them back), and the channel refuses another write until then.
 */
async function withDeadline<T>(write: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  // Not unref'd: a caller that only awaits this write must see it end.
  const deadline = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(notReading(timeoutMs, true)), timeoutMs)),
  );
  try {
    return await Promise.race([write, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Closes the process's stdin: it reads EOF after what was already written. */
export async function closeStdin(session: Environment, process: BackgroundProcess): Promise<boolean> {
  if (!process.stdinOpen || process.status !== "running") return false;
  const result = await session.execute(closeStdinScript(process.files), HOUSEKEEPING);
  process.stdinOpen = false;
  return result.exitCode === 0;
}
