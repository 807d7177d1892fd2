/**
 * The kill of one SDK call (Modal, Daytona) that the session's tree kill could not reach: its command had not
 * reported its PID yet (it was interrupted the moment it started, or its output is slow to come), or the kill
 * script failed. The call's processes all carry its mark, so they are killed by it, inside the sandbox: at once
 * when the command runs, as soon as it has started when it was still starting, and once more a moment later for a
 * wrapper that was still exec'ing. Only when that kill cannot run either does the backend's last resort follow
 * (stopping or terminating the whole sandbox, every other process of the session with it).
 */

/** After the kill by mark, when a call that has not ended is swept once more. */
const SECOND_SWEEP_MS = 1000;
/** After the kill, how long a call's end is waited for before its poller gives up (a process KILL cannot end). */
const GIVE_UP_MS = 60_000;

export class CallCancel {
  readonly #killByMark: () => Promise<boolean>;
  readonly #lastResort: () => Promise<unknown>;
  #cancelled = false;
  #cancelledAt = 0;
  #started = false;
  #ended = false;

  constructor(killByMark: () => Promise<boolean>, lastResort: () => Promise<unknown>) {
    this.#killByMark = killByMark;
    this.#lastResort = lastResort;
  }

  get cancelled(): boolean {
    return this.#cancelled;
  }

  /** Killed long enough ago that waiting on for the call's end means polling for ever. */
  get givenUp(): boolean {
    return this.#cancelled && Date.now() - this.#cancelledAt > GIVE_UP_MS;
  }

  /** Right before the command is started: a call killed already never starts. */
  beforeStart(): void {
    if (this.#cancelled) throw new Error("the call was killed before its command started");
  }

  /** The command has started: a kill that came while it was starting goes now. */
  async started(): Promise<void> {
    this.#started = true;
    if (this.#cancelled) await this.#kill();
  }

  /** The call is over: no second sweep. */
  ended(): void {
    this.#ended = true;
  }

  /** The handle's kill(). */
  cancel(): Promise<void> | undefined {
    if (this.#cancelled) return undefined;
    this.#cancelled = true;
    this.#cancelledAt = Date.now();
    return this.#started ? this.#kill() : undefined;
  }

  async #kill(): Promise<void> {
    if (!(await this.#killByMark())) {
      // Best effort, as every kill: a sandbox that cannot be stopped either fails the call's wait by itself.
      await this.#lastResort().catch(() => undefined);
      return;
    }
    setTimeout(() => {
      if (!this.#ended) void this.#killByMark();
    }, SECOND_SWEEP_MS).unref();
  }
}
