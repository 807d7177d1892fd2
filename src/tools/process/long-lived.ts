/**
 * A helper command that lasts as long as a background process (its output
 * follower, its end watcher). It runs with `longLived`, so a gateway counts
 * it apart from the calls in flight, against a bound of its own; past that
 * bound the gateway refuses it at once. Its first output is a mark that it
 * has started, so `started` says, before the caller relies on it, whether it
 * runs: resolved at the mark, rejected with the refusal.
 */

import type { Environment, ExecuteOptions, ExecuteResult } from "../../core/environment.js";
import { parsePollOutput, type PollAnswer } from "./process-scripts.js";

const MARK = "__sw_long_lived_started";
const STARTED = `${MARK}\n`;

export interface LongLived {
  /** Resolves once the command runs; rejects when the backend refused it. */
  started: Promise<void>;
  result: Promise<ExecuteResult>;
}

export function runLongLived(session: Environment, script: string, options: ExecuteOptions): LongLived {
  let markStarted!: () => void;
  let refuse!: (error: unknown) => void;
  const started = new Promise<void>((resolve, reject) => ((markStarted = resolve), (refuse = reject)));
  // Held until the mark has come whole (it may arrive in pieces), then the rest passes on.
  let head: string | undefined = "";
  const onOutput = options.onOutput;
  const result = session.execute(`builtin printf '%s\\n' ${MARK}\n${script}`, {
    ...options,
    longLived: true,
    onOutput: (text) => {
      if (head === undefined) return onOutput?.(text);
      head += text;
      if (head.length < STARTED.length && STARTED.startsWith(head)) return;
      // Anything but the mark first is passed on whole: the command runs, whatever came first.
      const rest = head.startsWith(STARTED) ? head.slice(STARTED.length) : head;
      head = undefined;
      markStarted();
      if (rest !== "") onOutput?.(rest);
    },
  });
  result.then(
    () => markStarted(),
    (error: unknown) => refuse(error),
  );
  // A caller that does not wait for the start must not see an unhandled rejection.
  started.catch(() => undefined);
  return { started, result };
}

/** A poll script (process-scripts.ts) run as a long-lived command: its answers once it ends. */
export function runLongLivedPoll(
  session: Environment,
  script: string,
  options: ExecuteOptions,
): { started: Promise<void>; answers: Promise<PollAnswer[]> } {
  let text = "";
  const { started, result } = runLongLived(session, script, { ...options, onOutput: (chunk) => (text += chunk) });
  return { started, answers: result.then((done) => (done.interrupted ? [] : parsePollOutput(text))) };
}
