/**
 * What earlier kill rounds of each call hit (`pid:starttime`): a later round
 * of the same call still ends those processes, wherever they went (a process
 * that left the call's group and dropped its mark). One memory per session;
 * a call's entry goes with its handle.
 */

import type { SweepResult, SweepTarget } from "../../core/sweep-script.js";

export class SweepHits {
  readonly #hits = new WeakMap<object, string[]>();

  /** Runs `sweep` with the call's remembered hits added to `target`, and remembers what it hit. */
  async sweep(
    call: object,
    target: SweepTarget,
    sweep: (target: SweepTarget) => Promise<SweepResult>,
  ): Promise<SweepResult> {
    const before = this.#hits.get(call) ?? [];
    const result = await sweep({ ...target, remembered: [...(target.remembered ?? []), ...before] });
    this.#hits.set(call, [...new Set([...before, ...result.hit])]);
    return result;
  }
}
