/**
 * A background process's output as it arrives (a PTY's emulator, the
 * library's `onOutput`) and, for its stdin, the same line when there is one.
 * Through the session's helper when it can attach (Environment.attachProcess:
 * no command in the backend for the output nor for a keystroke, no call held
 * while it lasts); else, and from where the channel stopped if the helper
 * refused it or went away, the follower command (log-follower.ts).
 */

import { StringDecoder } from "node:string_decoder";
import type { Environment } from "../../core/environment.js";
import type { ProcessChannel } from "../../core/process-channel.js";
import type { BackgroundProcess, ProcessOutputStream } from "./background-process.js";
import { attachOrFollow, type StreamStart } from "./attach-or-follow.js";
import { followLog } from "./log-follower.js";

/** How long the follower may keep reading after the process ended (a tail without --pid never ends by itself). */
const FOLLOW_AFTER_END_MS = 2000;

export class OutputStream implements ProcessOutputStream {
  /** Resolves once the output is followed; rejects when the follower could not start (a gateway at its bound). */
  readonly started: Promise<void>;
  readonly #start: StreamStart;
  #follower: AbortController | undefined;
  #stopped = false;
  readonly #decoder = new StringDecoder("utf8");
  readonly #session: Environment;
  readonly #process: BackgroundProcess;
  readonly #sink: (text: string) => void;
  readonly #ended: () => void;

  constructor(session: Environment, process: BackgroundProcess, sink: (text: string) => void, ended: () => void) {
    this.#session = session;
    this.#process = process;
    this.#sink = sink;
    this.#ended = ended;
    this.#start = attachOrFollow(
      session,
      {
        pid: process.pid,
        dir: process.files.dir,
        onOutput: (bytes) => {
          const text = this.#decoder.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
          if (text !== "") sink(text);
        },
      },
      {
        follow: (fromByte) => this.#follow(fromByte),
        stopped: () => this.#stopped,
        ended: () => {
          const rest = this.#decoder.end();
          if (rest !== "") this.#sink(rest);
          this.#ended();
        },
        followFailed: () => this.#ended(),
      },
    );
    this.started = this.#start.started;
  }

  /** The live line to the process's stdin, while there is one. */
  get channel(): ProcessChannel | undefined {
    return this.#start.channel;
  }

  /** The process ended: a channel ends by itself once its log is sent; the follower is ended a little later. */
  processEnded(): void {
    const follower = this.#follower;
    if (follower !== undefined) setTimeout(() => follower.abort(), FOLLOW_AFTER_END_MS).unref();
  }

  /** Stops streaming now (the session closes). */
  stop(): void {
    this.#stopped = true;
    this.#start.channel?.detach();
    this.#follower?.abort();
  }

  #follow(fromByte: number): Promise<void> {
    const follower = followLog(this.#session, this.#process, this.#sink, this.#ended, fromByte);
    this.#follower = follower.controller;
    if (this.#stopped) follower.controller.abort();
    else if (this.#process.status !== "running") this.processEnded();
    return follower.started;
  }
}
