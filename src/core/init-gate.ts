/**
 * Session inits that share one machine's CPU run a few at a time.
 *
 * An init runs the login profile, which costs a second or more of CPU where
 * it does real work (root's here runs `pyenv init`). Fifty sessions opened at
 * once on two cores all ran past their init timeout together, and a session
 * whose init fails runs without a snapshot: its exported variables stop
 * persisting. Queued, each init gets the CPU it needs, its timeout counts
 * from when it starts, and the last open waits about as long as before.
 */
import { availableParallelism } from "node:os";

/** Inits of one group that run at once: enough to keep the cores busy while one waits on I/O. */
export const INITS_AT_ONCE = Math.max(2, availableParallelism());

interface Gate {
  running: number;
  waiting: Array<() => void>;
}

const gates = new Map<string, Gate>();

/** Runs `init` once fewer than INITS_AT_ONCE inits of `group` run; undefined: no bound. */
export async function withInitSlot<T>(group: string | undefined, init: () => Promise<T>): Promise<T> {
  if (group === undefined) return init();
  let gate = gates.get(group);
  if (gate === undefined) {
    gate = { running: 0, waiting: [] };
    gates.set(group, gate);
  }
  if (gate.running >= INITS_AT_ONCE) await new Promise<void>((resolve) => gate.waiting.push(resolve));
  else gate.running += 1;
  try {
    return await init();
  } finally {
    const next = gate.waiting.shift();
    // The slot passes straight to the next waiter, so no newcomer can take it in between.
    if (next !== undefined) next();
    else {
      gate.running -= 1;
      if (gate.running === 0) gates.delete(group);
    }
  }
}
