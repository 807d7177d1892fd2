/**
 * The registry's own calls into the backend (poll, kill, write, resize):
 * short, and they never move the session's env or cwd (`isolated: true`), so a
 * poll can never undo a concurrent `export`.
 */

import type { Environment, ExecuteOptions } from "../../core/environment.js";
import { parsePollOutput, type PollAnswer } from "./process-scripts.js";

export const HOUSEKEEPING = { isolated: true, timeoutMs: 30_000 } as const;

/** Runs a poll script (process-scripts.ts) and returns its answers; none when the call was interrupted. */
export async function runPoll(session: Environment, script: string, options: ExecuteOptions): Promise<PollAnswer[]> {
  // The answer can be far larger than the session's inline output limit, so
  // it is collected from the stream, which is never cut.
  let text = "";
  const result = await session.execute(script, { ...options, onOutput: (chunk) => (text += chunk) });
  if (result.interrupted) return [];
  return parsePollOutput(text);
}
