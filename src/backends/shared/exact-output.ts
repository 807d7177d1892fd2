/**
 * An SDK call's output with its exact bytes. Daytona's and E2B's SDKs hand output
 * over as decoded UTF-8 text, which turns bytes that are not UTF-8 into U+FFFD, so the
 * command's output also goes to a file in the sandbox (the copy). Text passes
 * straight on until a U+FFFD shows up; from then on it is held back and the
 * copy's bytes are passed on instead.
 *
 * Nothing orders the three things this hears about: the log text, the exit
 * code (polled on its own channel) and the end of the log stream. The logs can
 * come long after the exit code (a loaded machine, the network), and a copy
 * read while it is written can lag behind them.
 * So the copy is fetched whenever text is held after the exit or after the
 * logs ended, and it is only taken once it covers all the text the logs have
 * shown; text that comes later than a fetched copy fetches it again. The end
 * marker is part of that text, so it always comes through.
 *
 * A command that keeps running (a PTY program, a server) would hold its text
 * until it ends, so held text is also fetched while it runs: shortly after it
 * is held, and no more often than four times as long as the last fetch took
 * (the copy is fetched whole, so fetching stays a fifth of the time at most).
 */

import type { OutputSink } from "./sdk-handle.js";

/** How long a copy that is behind the logs is fetched again before the decoded text is used instead. */
const COPY_CATCH_UP_MS = 3_000;
const FIRST_RETRY_MS = 25;
const MAX_RETRY_MS = 400;
/** How long held text of a running command waits before the copy is fetched for it. */
const LIVE_SYNC_MS = 100;

export class ExactOutput {
  readonly #sink: OutputSink;
  readonly #fetchCopy: () => Promise<Uint8Array>;
  readonly #retry: { first: number; max: number; budget: number };
  /** Bytes of the output the sink has had (as text before the first U+FFFD, then from the copy). */
  #sentBytes = 0;
  /** Characters of log text seen so far, NULs left out (see textLength). */
  #logChars = 0;
  /** Characters the last taken copy decodes to: log text up to here is already in the sink. */
  #coveredChars = 0;
  /** Text held back since the first U+FFFD, in case the copy cannot be had. */
  #held: string[] | undefined;
  /** The decoded text is passed on from here on: the copy could not be had. */
  #lossy = false;
  #exited = false;
  #logsEnded = false;
  #syncing: Promise<void> | undefined;
  #dirty = false;
  #liveTimer: NodeJS.Timeout | undefined;
  /** How long the last fetch of the copy took. */
  #lastFetchMs = 0;

  constructor(
    sink: OutputSink,
    fetchCopy: () => Promise<Uint8Array>,
    retry: { first: number; max: number; budget: number } = {
      first: FIRST_RETRY_MS,
      max: MAX_RETRY_MS,
      budget: COPY_CATCH_UP_MS,
    },
  ) {
    this.#sink = sink;
    this.#fetchCopy = fetchCopy;
    this.#retry = retry;
  }

  /** True while text is held back for the copy. */
  get holding(): boolean {
    return this.#held !== undefined && !this.#lossy;
  }

  /** Text is held back that no copy taken so far covers. */
  get #behind(): boolean {
    return this.holding && this.#logChars > this.#coveredChars;
  }

  /** Log text, from stdout or stderr, in the order the SDK handed it over. */
  push(text: string): void {
    if (this.#lossy) {
      this.#sink.push(text);
      return;
    }
    this.#logChars += textLength(text);
    if (this.#held === undefined && !text.includes("\uFFFD")) {
      this.#sink.push(text);
      this.#sentBytes += Buffer.byteLength(text);
      this.#coveredChars = this.#logChars;
      return;
    }
    this.#held ??= [];
    if (this.#logChars <= this.#coveredChars) return; // a copy taken earlier has it already
    this.#held.push(text);
    if (this.#exited || this.#logsEnded) this.#sync();
    else this.#scheduleLiveSync();
  }

  /** While the command runs, held text is fetched for after a pause, not only at its end. */
  #scheduleLiveSync(): void {
    if (this.#liveTimer !== undefined) return;
    this.#liveTimer = setTimeout(
      () => {
        this.#liveTimer = undefined;
        if (this.#behind) this.#sync();
      },
      Math.max(LIVE_SYNC_MS, 4 * this.#lastFetchMs),
    );
    this.#liveTimer.unref();
  }

  /** The command has exited: its copy is written or about to be. */
  exited(): void {
    this.#exited = true;
    if (this.#behind) this.#sync();
  }

  /** The log stream ended; resolves once the sink has everything (and then ends it). */
  async logsEnded(): Promise<void> {
    this.#logsEnded = true;
    clearTimeout(this.#liveTimer);
    if (this.#behind) this.#sync();
    while (this.#syncing !== undefined) await this.#syncing;
    this.#sink.end();
  }

  /** Resolves when no fetch of the copy is under way. */
  async settled(): Promise<void> {
    while (this.#syncing !== undefined) await this.#syncing;
  }

  #sync(): void {
    if (this.#syncing !== undefined) {
      this.#dirty = true;
      return;
    }
    this.#syncing = this.#catchUp().finally(() => {
      this.#syncing = undefined;
      if (this.#dirty) {
        this.#dirty = false;
        if (this.#behind) this.#sync();
      }
    });
  }

  /** Fetches the copy until it covers the logs (or the time is up), and passes on its new bytes. */
  async #catchUp(): Promise<void> {
    let wait = this.#retry.first;
    let waited = 0;
    for (;;) {
      let copy: Uint8Array;
      const started = performance.now();
      try {
        copy = await this.#fetchCopy();
        this.#lastFetchMs = performance.now() - started;
      } catch {
        this.#giveUp();
        return;
      }
      const chars = textLength(new TextDecoder("utf-8").decode(copy, { stream: true }));
      // At the end of the logs the copy has everything it ever will, as far as anyone can know.
      if (chars >= this.#logChars || (this.#logsEnded && waited >= this.#retry.budget)) {
        if (copy.length > this.#sentBytes) this.#sink.push(copy.subarray(this.#sentBytes));
        this.#sentBytes = Math.max(this.#sentBytes, copy.length);
        this.#coveredChars = Math.max(this.#coveredChars, chars);
        this.#held = [];
        return;
      }
      // While the command runs, a copy behind the logs is fetched again later (at its end at the latest): giving up
      // now would garble the rest of a long program's output because the copy lagged once under load.
      if (!this.#exited && !this.#logsEnded) {
        this.#scheduleLiveSync();
        return;
      }
      if (waited >= this.#retry.budget) {
        this.#giveUp();
        return;
      }
      // The copy is behind the logs: it will catch up.
      await new Promise((resolve) => setTimeout(resolve, wait));
      waited += wait;
      wait = Math.min(wait * 2, this.#retry.max);
    }
  }

  /** No usable copy: the decoded text is still better than nothing. */
  #giveUp(): void {
    for (const text of this.#held ?? []) this.#sink.push(text);
    this.#held = [];
    this.#lossy = true;
  }
}

/**
 * The length of decoded text, NULs left out: Daytona's log labellers read lines with bash's `read`,
 * which drops NUL bytes, so the logs can be shorter than the copy by its NULs and no more.
 */
function textLength(text: string): number {
  let nuls = 0;
  for (let i = text.indexOf("\0"); i !== -1; i = text.indexOf("\0", i + 1)) nuls++;
  return text.length - nuls;
}
