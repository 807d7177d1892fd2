/**
 * The processes one helper client has attached (process-channel.ts), by
 * channel id, apart from its calls: none holds a call's place. Routes the
 * helper's `o`, `E`, `i` and `x` frames to them.
 */

import type { ProcessAttachRequest } from "../../../core/process-channel.js";
import { ProtocolViolation, type Frame } from "./frames.js";
import { attachPayload, HelperProcessChannel, type ChannelSend } from "./process-channel.js";
import { REQUEST } from "./protocol.js";

export class ProcessChannels {
  readonly #channels = new Map<number, HelperProcessChannel>();
  readonly #send: ChannelSend;
  /** Told each time a channel closes (the client lets its stream go when nothing is open). */
  readonly #closed: () => void;

  constructor(send: ChannelSend, closed: () => void) {
    this.#send = send;
    this.#closed = closed;
  }

  get size(): number {
    return this.#channels.size;
  }

  /** Channels whose write waits for the helper's ack: only these need the helper to answer soon. */
  get writing(): number {
    let n = 0;
    for (const channel of this.#channels.values()) if (channel.writing) n++;
    return n;
  }

  /** Attaches as channel `id`; undefined when the request cannot be framed (the caller follows it the plain way). */
  open(id: number, request: ProcessAttachRequest): HelperProcessChannel | undefined {
    const payload = attachPayload(request);
    if (payload === undefined) return undefined;
    const channel = new HelperProcessChannel(id, request, this.#send);
    this.#channels.set(id, channel);
    void this.#send(REQUEST.attach, id, payload).then((sent) => {
      if (!sent) this.#close(id, undefined);
    });
    return channel;
  }

  /** An `o`, `E`, `i` or `x` frame; false for any other. */
  onFrame(frame: Frame): boolean {
    if (frame.type !== "o" && frame.type !== "E" && frame.type !== "i" && frame.type !== "x") return false;
    const channel = this.#channels.get(frame.id);
    // Every attach ends with one `x`, and nothing of it comes after: a frame for no open channel is not the helper's.
    if (channel === undefined)
      throw new ProtocolViolation(`a '${frame.type}' frame for channel ${frame.id}, which is not open`);
    if (frame.type === "o") channel.output(frame.payload);
    else if (frame.type === "E") channel.stderr(frame.payload);
    else if (frame.type === "i") channel.acked(frame.payload);
    else this.#close(frame.id, frame.payload);
    return true;
  }

  /** The helper went away: every channel ends "lost". */
  loseAll(): void {
    for (const id of [...this.#channels.keys()]) this.#close(id, undefined);
  }

  #close(id: number, endPayload: Buffer | undefined): void {
    const channel = this.#channels.get(id);
    if (channel === undefined) return;
    this.#channels.delete(id);
    this.#closed();
    if (endPayload !== undefined) channel.ended(endPayload);
    else channel.settle("lost");
  }
}
