/**
 * The end of a background process as an event on Node's side: whatever sees
 * it first (kill, a poll, the notify watcher) tells every pending `wait` at
 * once, so a wait is woken by the end, never by its next check inside the
 * backend, which a loaded machine can stretch to seconds.
 */

import type { BackgroundProcess } from "./background-process.js";

const ends = new WeakMap<BackgroundProcess, AbortController>();

function controller(process: BackgroundProcess): AbortController {
  let end = ends.get(process);
  if (end === undefined) {
    end = new AbortController();
    ends.set(process, end);
  }
  return end;
}

/** Aborted when the registry has seen the process end. */
export const endSignal = (process: BackgroundProcess): AbortSignal => controller(process).signal;

/** The registry saw the process end. */
export const markEnded = (process: BackgroundProcess): void => controller(process).abort();
