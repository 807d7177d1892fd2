/**
 * A ProcessHandle over an SDK call (Modal, Daytona), where there is no child
 * process, without losing output or the exit code on a cancel.
 *
 * - Output is streamed: the SDK call pushes chunks as they arrive, so a
 *   timeout or interrupt keeps the partial output.
 * - An SDK error keeps its message: wait() rejects with a typed
 *   BackendUnavailableError that quotes it (the Python handle returned exit 1
 *   with empty output).
 * - kill() is the *last resort* (terminate or stop the sandbox). A timeout or
 *   interrupt first kills the process tree inside the sandbox (the
 *   transport's killTree); the session calls kill() only when that fails.
 */

import { BackendUnavailableError, isShellwrightError } from "../../core/errors.js";
import type { ProcessHandle } from "../../core/transport.js";

/** Where an SDK call delivers its output. */
export interface OutputSink {
  push(chunk: Uint8Array | string): void;
  /** The SDK's output stream ended (it may end after the exit, or never: a background child can hold it). */
  end(): void;
}

export interface SdkCallOptions {
  /** Backend name, for error messages ("modal", "daytona"). */
  backend: string;
  /**
   * Starts the command, pushes its output into the sink and resolves with its exit code. With
   * separateStreams, its stderr goes into `errors` (else `errors` is the sink itself).
   */
  run(sink: OutputSink, errors: OutputSink): Promise<number>;
  /** The call keeps stderr apart: the handle's `stderr` carries what the call pushes into `errors`. */
  separateStreams?: boolean | undefined;
  /** Last resort: stop the whole thing (sandbox.terminate(), sandbox.stop()). Errors are swallowed. */
  cancel?: () => unknown;
}

export interface SdkProcessHandle extends ProcessHandle {
  /** True once kill() was called. */
  readonly cancelled: boolean;
}

/** Exit code reported for a call whose sandbox was terminated under it: 128 + SIGKILL. */
const KILLED_EXIT = 137;

export function sdkProcessHandle(options: SdkCallOptions): SdkProcessHandle {
  const queue = new ChunkQueue();
  const errorQueue = options.separateStreams === true ? new ChunkQueue() : undefined;
  let cancelled = false;
  const sink: OutputSink = { push: (chunk) => queue.push(chunk), end: () => queue.end() };
  const errors: OutputSink =
    errorQueue === undefined ? sink : { push: (chunk) => errorQueue.push(chunk), end: () => errorQueue.end() };

  const exit = (async () => {
    try {
      return await options.run(sink, errors);
    } catch (error) {
      queue.end();
      errorQueue?.end();
      // After our own kill the call is expected to fail: the sandbox is gone.
      if (cancelled) return KILLED_EXIT;
      if (isShellwrightError(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new BackendUnavailableError(`${options.backend} exec failed: ${message}`, {
        cause: error,
        backend: options.backend,
      });
    }
  })();
  // The session always awaits wait(); this only keeps an early failure from
  // being reported as unhandled before it does.
  exit.catch(() => undefined);

  return {
    output: queue,
    ...(errorQueue === undefined ? {} : { stderr: errorQueue }),
    wait: () => exit,
    get cancelled() {
      return cancelled;
    },
    kill() {
      if (cancelled) return;
      cancelled = true;
      try {
        const result = options.cancel?.();
        if (result instanceof Promise) result.catch(() => undefined);
      } catch {
        // best effort
      }
    },
  };
}

/** An async-iterable queue of byte chunks; strings are encoded as UTF-8. */
export class ChunkQueue implements AsyncIterable<Uint8Array> {
  readonly #chunks: Uint8Array[] = [];
  #ended = false;
  #wake: (() => void) | undefined;

  push(chunk: Uint8Array | string): void {
    if (this.#ended) return;
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    if (bytes.length === 0) return;
    this.#chunks.push(bytes);
    this.#notify();
  }

  end(): void {
    this.#ended = true;
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      const next = this.#chunks.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }
}
