/**
 * Node's end of one attached process (protocol.ts: `T`, `I`, `U`; `o`, `E`,
 * `i`, `x`): its output as the helper streams it (its stderr apart as `E` when asked), its stdin one write at a time,
 * and its end. The channel's id is drawn from the client's call ids, so a
 * frame names one thing only.
 */

import { ProcessError } from "../../../core/errors.js";
import type {
  ProcessAttachRequest,
  ProcessChannel,
  ProcessChannelEnd,
  ProcessWriteResult,
} from "../../../core/process-channel.js";
import { ProtocolViolation } from "./frames.js";
import { ATTACH_FLAG, INPUT_STATUS, MAX_INPUT_BYTES, MAX_PROC_DIR_BYTES, PROC_END, REQUEST } from "./protocol.js";

/** How the client sends for a channel: a request frame, resolving once it is in the helper's pipe. */
export type ChannelSend = (type: "T" | "I" | "U", id: number, payload?: Uint8Array) => Promise<boolean>;

const WRITE_RESULTS: Record<number, ProcessWriteResult> = {
  [INPUT_STATUS.written]: "written",
  [INPUT_STATUS.closed]: "closed",
  [INPUT_STATUS.notReady]: "notReady",
};
const ENDS: Record<number, ProcessChannelEnd> = {
  [PROC_END.ended]: "ended",
  [PROC_END.detached]: "detached",
  [PROC_END.refused]: "refused",
};

/**
 * The attach request's payload: u32be pid, u8 ATTACH_FLAG bits, then the directory; undefined when the directory
 * cannot go in one.
 */
export function attachPayload(request: ProcessAttachRequest): Buffer | undefined {
  const dir = Buffer.from(request.dir);
  if (dir.length === 0 || dir.length > MAX_PROC_DIR_BYTES || dir.includes(0)) return undefined;
  if (!Number.isInteger(request.pid) || request.pid <= 1 || request.pid > 0xffffffff) return undefined;
  const head = Buffer.alloc(5);
  head.writeUInt32BE(request.pid, 0);
  head[4] = request.onStderr === undefined ? 0 : ATTACH_FLAG.stderrApart;
  return Buffer.concat([head, dir]);
}

export class HelperProcessChannel implements ProcessChannel {
  readonly id: number;
  readonly end: Promise<ProcessChannelEnd>;
  #offset = 0;
  #stderrOffset = 0;
  #done = false;
  #resolveEnd!: (end: ProcessChannelEnd) => void;
  /** The write the helper has not acked yet. */
  #pending: ((result: ProcessWriteResult) => void) | undefined;
  /** The part of a long write still to send (the helper takes MAX_INPUT_BYTES per request). */
  #rest: Uint8Array | undefined;
  readonly #send: ChannelSend;
  readonly #onOutput: (bytes: Uint8Array) => void;
  readonly #onStderr: ((bytes: Uint8Array) => void) | undefined;

  constructor(id: number, request: ProcessAttachRequest, send: ChannelSend) {
    this.id = id;
    this.#send = send;
    this.#onOutput = request.onOutput;
    this.#onStderr = request.onStderr;
    this.end = new Promise((resolve) => (this.#resolveEnd = resolve));
  }

  get offset(): number {
    return this.#offset;
  }

  get stderrOffset(): number {
    return this.#stderrOffset;
  }

  get done(): boolean {
    return this.#done;
  }

  /** A write waits for the helper's ack. */
  get writing(): boolean {
    return this.#pending !== undefined;
  }

  write(data: Uint8Array): Promise<ProcessWriteResult> {
    // Nothing sent: the `execute` route tells an ended process from a channel that was lost under a running one.
    if (this.#done) return Promise.resolve("notReady");
    if (this.#pending !== undefined)
      return Promise.reject(
        new ProcessError(
          "An earlier write to this process's stdin still waits for it to read its input: one at a time.",
        ),
      );
    if (data.length === 0) return Promise.resolve("written");
    return new Promise((resolve) => {
      this.#pending = resolve;
      this.#sendPiece(data);
    });
  }

  #sendPiece(data: Uint8Array, first = true): void {
    this.#rest = data.length > MAX_INPUT_BYTES ? data.subarray(MAX_INPUT_BYTES) : undefined;
    void this.#send(REQUEST.input, this.id, data.subarray(0, MAX_INPUT_BYTES)).then((sent) => {
      if (!sent) this.#settleWrite(first ? "notReady" : "closed");
    });
  }

  detach(): void {
    if (!this.#done) void this.#send(REQUEST.detach, this.id);
  }

  /** An `o` frame's piece. */
  output(bytes: Buffer): void {
    if (this.#done) throw new ProtocolViolation(`output for process channel ${this.id} after its end`);
    this.#offset += bytes.length;
    this.#onOutput(bytes);
  }

  /** An `E` frame's piece: only a channel attached with its stderr apart gets one. */
  stderr(bytes: Buffer): void {
    if (this.#done) throw new ProtocolViolation(`stderr for process channel ${this.id} after its end`);
    if (this.#onStderr === undefined)
      throw new ProtocolViolation(`stderr for process channel ${this.id}, which did not ask for it apart`);
    this.#stderrOffset += bytes.length;
    this.#onStderr(bytes);
  }

  /** An `i` frame. */
  acked(payload: Buffer): void {
    const result = WRITE_RESULTS[payload[0]!];
    if (result === undefined) throw new ProtocolViolation(`an input ack with status ${payload[0]}`);
    if (this.#pending === undefined)
      throw new ProtocolViolation(`an input ack for channel ${this.id}, which sent none`);
    // "notReady" comes only for a first piece (the helper checks before it writes any): the rest goes the same way.
    if (result === "written" && this.#rest !== undefined) return this.#sendPiece(this.#rest, false);
    this.#settleWrite(result);
  }

  /** An `x` frame: the channel's last. */
  ended(payload: Buffer): void {
    const end = ENDS[payload[0]!];
    if (end === undefined) throw new ProtocolViolation(`a process end ${payload[0]}`);
    this.settle(end);
  }

  /** The channel is over (its end frame, or the helper went away: "lost"). */
  settle(end: ProcessChannelEnd): void {
    if (this.#done) return;
    this.#done = true;
    // A refused channel was never attached: none of a write sent meanwhile went in (the helper drops it), so the
    // `execute` route takes it; after any other end part of it may have.
    this.#settleWrite(end === "refused" ? "notReady" : "closed");
    this.#resolveEnd(end);
  }

  #settleWrite(result: ProcessWriteResult): void {
    const pending = this.#pending;
    this.#pending = undefined;
    this.#rest = undefined;
    pending?.(result);
  }
}
