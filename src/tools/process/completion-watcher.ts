/**
 * The watcher of a process started with `notifyOnComplete`: one waiting
 * command inside the backend that ends when the process does, so its
 * completion event is there without a poll.
 */

import type { Environment } from "../../core/environment.js";
import type { BackgroundProcess } from "./background-process.js";
import { runLongLivedPoll } from "./long-lived.js";
import type { PollAnswer } from "./process-scripts.js";

/** The longest a timer may wait in Node (about 24.8 days). */
const FOREVER_MS = 2 ** 31 - 1;
/** Watch attempts in a row that may end without an answer before the watcher gives up (polls still work). */
const WATCH_RETRIES = 5;

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * Watches `process` until it ends or `signal` aborts: `waitScript()` is the
 * waiting command (made anew each round, so it follows the current settings),
 * `apply` takes its answers. Resolves once the first one runs; rejects when the
 * backend refused it (a gateway at its bound of long-lived executions).
 */
export function watchCompletion(
  session: Environment,
  process: BackgroundProcess,
  signal: AbortSignal,
  waitScript: () => string,
  apply: (answer: PollAnswer) => void,
): Promise<void> {
  let first: Promise<void> | undefined;
  const loop = async (): Promise<void> => {
    let failures = 0;
    while (process.status === "running" && !signal.aborted && !session.closed) {
      const waiting = runLongLivedPoll(session, waitScript(), { isolated: true, timeoutMs: FOREVER_MS, signal });
      first ??= waiting.started;
      const answers = await waiting.answers;
      for (const answer of answers) apply(answer);
      // A backend that ends the wait without an answer (an exec time limit,
      // a hiccup) is retried after a pause, a few times, never in a hot loop.
      if (answers.length > 0) failures = 0;
      else if (++failures >= WATCH_RETRIES) return;
      else await sleep(1000 * failures, signal);
    }
  };
  // A watcher that fails (the backend went away) leaves the process to poll.
  const running = loop().catch(() => undefined);
  return first ?? running;
}
