/**
 * Remembers the wrapper PIDs of a session's calls, read from the PID marker
 * each wrapper prints first (script.ts, `reportPid`), for backends that kill
 * inside a box. At close, a wrapper that has exited still names the group it
 * led: a child that emptied its environment (`env -i`) and outlived its call
 * is found there, and nowhere else.
 */

/** Past this many, the oldest calls' orphans rely on their marks alone. */
const MAX_LEADERS = 10_000;
/** The marker is the first line; a longer head without one means it is not coming. */
const HEAD_BYTES = 256;

export class WrapperPids {
  readonly #pids = new Set<number>();

  get all(): number[] {
    return [...this.#pids];
  }

  /** A leader known another way (a fast-path job leads its own group and session). */
  add(pid: number): void {
    if (this.#pids.size < MAX_LEADERS) this.#pids.add(pid);
  }

  /** The same output, passed through unchanged, noting the wrapper's PID on the way. */
  async *watch(output: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
    let head: string | undefined = "";
    for await (const chunk of output) {
      if (head !== undefined) {
        head += Buffer.from(chunk).toString("latin1");
        const pid = /__SHELLWRIGHT_PID_\w+?__(\d+)(?::\d*)?__/.exec(head)?.[1];
        if (pid !== undefined) this.add(Number(pid));
        if (pid !== undefined || head.length > HEAD_BYTES) head = undefined;
      }
      yield chunk;
    }
  }
}
