/**
 * A background process's stdout and stderr apart, as bytes (spawn's `separateStreams`): through the session's helper
 * when it can attach (one channel: its stdout as `o` frames, its stderr as `E`, no command in the backend); else,
 * and from where the channel stopped if the helper refused it or went away, one byte-exact follower per stream
 * (byte-follower.ts). Each stream's bytes come in order; between the two, the order is as the reads found them.
 */

import type { Environment } from "../../core/environment.js";
import type { ProcessChannel } from "../../core/process-channel.js";
import type { BackgroundProcess, ProcessOutputStream } from "./background-process.js";
import { attachOrFollow, type StreamStart } from "./attach-or-follow.js";
import { followBytes } from "./byte-follower.js";
import { writeStdin } from "./process-stdin.js";
import type { LogName } from "./log-bound.js";

/** How long the followers may keep reading after the process ended (a tail without --pid never ends by itself). */
const FOLLOW_AFTER_END_MS = 2000;

export interface StreamSinks {
  stdout(bytes: Uint8Array): void;
  stderr(bytes: Uint8Array): void;
}

export class SplitOutputStream implements ProcessOutputStream {
  /** Resolves once both streams are followed; rejects when a follower could not start (a gateway at its bound). */
  readonly started: Promise<void>;
  readonly #start: StreamStart;
  readonly #followers: AbortController[] = [];
  #stopped = false;
  #ended = false;
  readonly #session: Environment;
  readonly #process: BackgroundProcess;
  readonly #sinks: StreamSinks;
  readonly #onEnd: () => void;

  constructor(session: Environment, process: BackgroundProcess, sinks: StreamSinks, ended: () => void) {
    this.#session = session;
    this.#process = process;
    this.#sinks = sinks;
    this.#onEnd = ended;
    this.#start = attachOrFollow(
      session,
      {
        pid: process.pid,
        dir: process.files.dir,
        onOutput: (bytes) => sinks.stdout(bytes),
        onStderr: (bytes) => sinks.stderr(bytes),
      },
      {
        follow: (stdoutFrom, stderrFrom) => this.#follow(stdoutFrom, stderrFrom),
        stopped: () => this.#stopped,
        ended: () => this.#end(),
        followFailed: () => this.#end(),
      },
    );
    this.started = this.#start.started;
  }

  get channel(): ProcessChannel | undefined {
    return this.#start.channel;
  }

  /**
   * Writes to its stdin: through the helper while the channel lasts (no process started), else `execute`. The
   * registry calls it one write at a time, in order with the close (inStdinOrder).
   */
  write(data: string): Promise<boolean> {
    return writeStdin(this.#session, this.#process, data, this.#start.channel);
  }

  processEnded(): void {
    const followers = this.#followers;
    if (followers.length > 0)
      setTimeout(() => {
        for (const follower of followers) follower.abort();
      }, FOLLOW_AFTER_END_MS).unref();
  }

  stop(): void {
    this.#stopped = true;
    this.#start.channel?.detach();
    for (const follower of this.#followers) follower.abort();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#onEnd();
  }

  #follow(stdoutFrom: number, stderrFrom: number): Promise<void> {
    let open = 2;
    const one = (name: LogName, sink: (bytes: Uint8Array) => void, from: number) => {
      const follower = followBytes(this.#session, this.#process, name, sink, () => --open === 0 && this.#end(), from);
      this.#followers.push(follower.controller);
      return follower.started;
    };
    const started = Promise.all([
      one("log", (bytes) => this.#sinks.stdout(bytes), stdoutFrom),
      one("err", (bytes) => this.#sinks.stderr(bytes), stderrFrom),
    ]).then(() => undefined);
    if (this.#stopped) for (const follower of this.#followers) follower.abort();
    else if (this.#process.status !== "running") this.processEnded();
    return started;
  }
}
