/**
 * One fast-path call's output as an async iterable, fed by the helper's
 * frames. The helper's stream is shared by every call: when a consumer falls
 * behind, `onBacklog` pauses that stream (the helper then blocks, its jobs'
 * pipes fill and they block too), so memory stays bounded.
 */

/** Bytes queued for a consumer before the shared stream pauses. */
export const BACKLOG_LIMIT_BYTES = 8 * 1024 * 1024;

export class CallOutput implements AsyncIterable<Uint8Array> {
  #queue: Uint8Array[] = [];
  #queuedBytes = 0;
  #ended = false;
  #wake: (() => void) | undefined;
  readonly #onBacklog: (full: boolean) => void;

  constructor(onBacklog: (full: boolean) => void) {
    this.#onBacklog = onBacklog;
  }

  push(bytes: Uint8Array): void {
    if (this.#ended) return;
    this.#queue.push(bytes);
    this.#queuedBytes += bytes.length;
    if (this.#queuedBytes > BACKLOG_LIMIT_BYTES) this.#onBacklog(true);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      const next = this.#queue.shift();
      if (next !== undefined) {
        const wasFull = this.#queuedBytes > BACKLOG_LIMIT_BYTES;
        this.#queuedBytes -= next.length;
        if (wasFull && this.#queuedBytes <= BACKLOG_LIMIT_BYTES) this.#onBacklog(false);
        yield next;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }
}
