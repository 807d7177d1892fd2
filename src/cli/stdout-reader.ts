/**
 * The reader of stdout going away (`shellwright run plan.json | head -1`):
 * the next write fails with EPIPE. Unwatched, that is an uncaught error with
 * a stack trace and exit 1; watched, the command in progress is stopped
 * through `signal`, nothing more is written, and the CLI exits 141 (128 +
 * SIGPIPE), quietly, as `cat` does. Node ignores SIGPIPE, so the error is
 * the only notice there is.
 *
 * Only a write notices: a step that prints nothing (`sleep 15; echo two`)
 * runs on until it prints or ends. Tried on Linux, Node 20, with the reader
 * gone and nothing written: process.stdout emits no 'error', 'close' or
 * 'end' (by all appearances libuv watches a write-only pipe only while a
 * write is pending, so the pipe's POLLERR goes unseen); a zero-length write
 * ("" or an empty Buffer) succeeds, whether Node skips it or write(2) of 0
 * bytes does not check for a reader;
 * a readable net.Socket on fd 1 fails with ENOTCONN at once whether or not a
 * reader is there. Writing a real byte would change the output, and looking
 * through /proc for the pipe's read end is neither cheap nor complete (other
 * users' processes are hidden).
 */

import { writeStderr } from "../core/stderr.js";

/** 128 + SIGPIPE: what a shell reports for a writer whose reader left. */
export const READER_GONE_EXIT_CODE = 141;

export interface StdoutReader {
  /** Aborted when the reader is gone. */
  readonly signal: AbortSignal;
  gone(): boolean;
  /**
   * Writes unless the reader is gone; settles once the write is done or has
   * failed, so a caller that awaits it starts nothing more after a failed write
   * (the error event alone comes a tick later, after the next step began).
   */
  write(data: string | Uint8Array): Promise<void>;
  dispose(): void;
}

export function watchStdoutReader(): StdoutReader {
  const controller = new AbortController();
  const onError = (error: NodeJS.ErrnoException): void => {
    // Another write error (a full disk behind a redirect) is reported too, but also ends the output.
    if (error.code !== "EPIPE") writeStderr(`shellwright: cannot write to stdout: ${error.message}\n`);
    controller.abort();
  };
  process.stdout.on("error", onError);
  return {
    signal: controller.signal,
    gone: () => controller.signal.aborted,
    write(data) {
      if (controller.signal.aborted) return Promise.resolve();
      return new Promise((resolve) => {
        process.stdout.write(data, (error) => {
          if (error) onError(error);
          resolve();
        });
      });
    },
    dispose: () => void process.stdout.off("error", onError),
  };
}
