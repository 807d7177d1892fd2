/**
 * A live line to one background process inside the backend, when the
 * session's fast-path helper can give one (Environment.attachProcess): its
 * stdin written and its output streamed by the helper the session already
 * runs, with no command started in the backend for either. Without it (the
 * plain path, a backend without the helper, a gateway) the tools use
 * `execute`, as they always did.
 */

/** What to attach to: a process a call of this session started, and its directory (tools/process). */
export interface ProcessAttachRequest {
  /** Its wrapper's pid (its process group). */
  pid: number;
  /** Its directory inside the backend: `log` (or the bounded layout with `bound`), `in`, `holder`. */
  dir: string;
  /** Its output from the log's start, as it arrives, in order (its stdout alone when `onStderr` is given). */
  onOutput(bytes: Uint8Array): void;
  /**
   * For a process started with its stderr apart (its `err` file): its stderr from the start, as it arrives, in
   * order. Without it, only `log` is streamed.
   */
  onStderr?: ((bytes: Uint8Array) => void) | undefined;
}

/**
 * How a write went: in its stdin; closed: its stdin closed, it ended, or the channel was lost, maybe after part of
 * it went in (never sent again: keystrokes typed twice); notReady: none of it went in (its stdin not open yet, or the
 * channel was over before it was sent): the `execute` route takes it (and waits for its stdin).
 */
export type ProcessWriteResult = "written" | "closed" | "notReady";

/**
 * How a channel ended: the process ended and every byte of its log was delivered; detached; refused (not the
 * helper's process, or its table is full: follow it the `execute` way); lost (the helper went away: output may be
 * missing past `offset`).
 */
export type ProcessChannelEnd = "ended" | "detached" | "refused" | "lost";

export interface ProcessChannel {
  /** One write at a time: a second before the first resolved is refused (a ProcessError). */
  write(data: Uint8Array): Promise<ProcessWriteResult>;
  readonly end: Promise<ProcessChannelEnd>;
  /** Bytes of output delivered so far (of stdout, when stderr is apart). */
  readonly offset: number;
  /** Bytes of stderr delivered so far (0 unless `onStderr` was given). */
  readonly stderrOffset: number;
  /** Stops the stream; `end` resolves "detached" (or how it ended first). */
  detach(): void;
}
