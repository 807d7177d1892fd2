/**
 * One long command inside the backend that streams a background process's log
 * to Node as it grows: into a PTY process's terminal emulator, and to the
 * library's `onOutput` listener. It reads the log file, not the poll's offset,
 * so it never takes output away from poll, wait or log.
 */

import type { Environment } from "../../core/environment.js";
import { shellQuote } from "../../core/script.js";
import type { BackgroundProcess } from "./background-process.js";
import { followScript } from "./log-bound.js";
import { runLongLived } from "./long-lived.js";

/** The longest a timer may wait in Node (about 24.8 days). */
const FOREVER_MS = 2 ** 31 - 1;

/**
 * Starts following (from byte `fromByte` of the output); the controller ends it (the registry aborts it a little
 * after the process ended). `started` rejects when the backend refused it
 * (a gateway at its bound of long-lived executions).
 */
export function followLog(
  session: Environment,
  process: BackgroundProcess,
  sink: (text: string) => void,
  ended: () => void,
  fromByte = 0,
): { controller: AbortController; started: Promise<void> } {
  const controller = new AbortController();
  const script = followScript(shellQuote(process.files.dir), process.pid, fromByte);
  const { started, result } = runLongLived(session, script, {
    isolated: true,
    timeoutMs: FOREVER_MS,
    signal: controller.signal,
    onOutput: sink,
  });
  result.catch(() => undefined).finally(ended);
  return { controller, started };
}
