/** A fast-path call's end, from the helper's exit report (collect-call.ts's EndDetector). */

import type { EndDetector } from "./collect-call.js";
import type { FastCallEnd, FastCallHandle } from "./transport.js";

/** A fast-path call ends with the helper's report: no marker is scanned, the output passes through. */
export class FastEndDetector implements EndDetector {
  readonly pid = undefined;
  #end: FastCallEnd | undefined;

  constructor(handle: FastCallHandle) {
    void handle.end.then((end) => (this.#end = end));
  }

  /** Never "done" early: the call ends when its output iterable does (after the last chunk) and its status is in. */
  readonly done = false;

  get payload(): string | undefined {
    const end = this.#end;
    if (end === undefined || end.killed) return undefined;
    // An uncommitted call's cwd field says why its dump failed, if it did.
    return end.committed ? `C:${end.cwd}` : end.cwd === "" ? "N" : `F${end.cwd}`;
  }

  push(chunk: Uint8Array): Uint8Array {
    return chunk;
  }

  flush(): Uint8Array {
    return new Uint8Array(0);
  }
}
