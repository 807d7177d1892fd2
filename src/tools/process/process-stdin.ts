/** A background process's stdin (its terminal, for a PTY process), written and closed through the backend. */

import type { Environment } from "../../core/environment.js";
import type { ProcessChannel } from "../../core/process-channel.js";
import { ProcessError } from "../../core/errors.js";
import type { BackgroundProcess } from "./background-process.js";
import { HOUSEKEEPING } from "./housekeeping.js";
import { closeStdinScript, writeStdinScript } from "./process-scripts.js";

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
): Promise<boolean> {
  if (!process.stdinOpen || process.status !== "running") return false;
  if (channel !== undefined) {
    const result = await channel.write(Buffer.from(data));
    // Only a write none of which went in takes the `execute` route: "closed" may come after part of it (a long
    // write's first pieces, a pipe that broke mid-write, the channel lost while the helper held it).
    if (result !== "notReady") return result === "written";
  }
  const result = await session.execute(writeStdinScript(process.files), {
    ...HOUSEKEEPING,
    timeoutMs: 10_000,
    stdin: data,
  });
  if (result.exitCode === 0) return true;
  if (result.exitCode === 3) process.stdinOpen = false;
  if (result.timedOut)
    throw new ProcessError(
      "Writing to the process's stdin timed out: it is not reading its input (its pipe buffer is full).",
    );
  return false;
}

/** Closes the process's stdin: it reads EOF after what was already written. */
export async function closeStdin(session: Environment, process: BackgroundProcess): Promise<boolean> {
  if (!process.stdinOpen || process.status !== "running") return false;
  const result = await session.execute(closeStdinScript(process.files), HOUSEKEEPING);
  process.stdinOpen = false;
  return result.exitCode === 0;
}
