/** A fast-path call's end, from the helper's exit report (collect-call.ts's EndDetector). */

import type { EndDetector } from "./collect-call.js";
import type { MarkerPayload } from "./marker-payload.js";
import type { FastCallEnd, FastCallHandle } from "./transport.js";

/** What a fast-path call's end says about the session's state, as the end marker would; undefined when killed. */
export function fastEndState(end: FastCallEnd): MarkerPayload | undefined {
  if (end.killed) return undefined;
  if (end.committed) return { committed: true, ...(end.cwd === undefined ? {} : { cwd: end.cwd }) };
  return end.saveFailed === undefined ? { committed: false } : { committed: false, saveFailed: end.saveFailed };
}

/** A fast-path call ends with the helper's report: no marker is scanned, the output passes through. */
export class FastEndDetector implements EndDetector {
  readonly pid = undefined;
  #end: FastCallEnd | undefined;

  constructor(handle: FastCallHandle) {
    void handle.end.then((end) => (this.#end = end));
  }

  /** Never "done" early: the call ends when its output iterable does (after the last chunk) and its status is in. */
  readonly done = false;

  get marker(): MarkerPayload | undefined {
    return this.#end === undefined ? undefined : fastEndState(this.#end);
  }

  push(chunk: Uint8Array): Uint8Array {
    return chunk;
  }

  flush(): Uint8Array {
    return new Uint8Array(0);
  }
}
