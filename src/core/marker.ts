/**
 * Finds the in-band markers in a command's output stream and strips them.
 *
 * The end marker (`__SHELLWRIGHT_END_<secret>__<payload>__SHELLWRIGHT_END_<secret>__\n`)
 * is the last thing the outer shell prints: seeing it means the command's
 * output is complete even while a backgrounded child still holds the pipe
 * open. It is keyed by the call's secret, which the command cannot read, so a
 * marker the command prints itself is plain output. Bytes
 * that might be the start of the marker are held back, so no caller, streaming
 * or not, ever sees a piece of it. Remote backends may also print a PID line
 * first, which is stripped the same way.
 */

import { parseMarkerPayload, type MarkerPayload } from "./marker-payload.js";
import { markerOpen } from "./script.js";
import { pidMarker } from "./wrapper-pid.js";

export class MarkerScanner {
  readonly #needle: Buffer;
  readonly #close: Buffer;
  #pidPrefix: Buffer | undefined;
  #held: Buffer = Buffer.alloc(0);
  #captured: Buffer | undefined;
  #payload: string | undefined;
  #pid: number | undefined;
  #pidStartTime: string | undefined;

  /**
   * @param secret the call's secret (it keys the end marker)
   * @param options.sessionId keys the PID line (default: `secret`)
   */
  constructor(secret: string, options: { expectPid?: boolean; sessionId?: string } = {}) {
    const open = markerOpen(secret);
    this.#needle = Buffer.from(open);
    this.#close = Buffer.from(`${open}\n`);
    this.#pidPrefix = options.expectPid ? Buffer.from(pidMarker(options.sessionId ?? secret)) : undefined;
  }

  /** True once the whole end marker has been seen. */
  get done(): boolean {
    return this.#payload !== undefined;
  }

  /** The end marker's payload (see parseMarkerPayload); undefined until it is seen. */
  get payload(): string | undefined {
    return this.#payload;
  }

  /** The payload, parsed (collect-call.ts's EndDetector). */
  get marker(): MarkerPayload | undefined {
    return this.#payload === undefined ? undefined : parseMarkerPayload(this.#payload);
  }

  get pid(): number | undefined {
    return this.#pid;
  }

  /** The wrapper's start time as its PID line gave it (`/proc` clock ticks); undefined when it gave none. */
  get pidStartTime(): string | undefined {
    return this.#pidStartTime;
  }

  /** Feed a chunk; returns the bytes that are command output. */
  push(chunk: Uint8Array): Buffer {
    if (this.done) return EMPTY;
    let data =
      this.#held.length > 0
        ? Buffer.concat([this.#held, chunk])
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    this.#held = EMPTY;
    if (this.#pidPrefix !== undefined) {
      const consumed = this.#takePid(data);
      if (consumed < 0) {
        this.#held = data;
        return EMPTY;
      }
      data = data.subarray(consumed);
    }
    if (this.#captured !== undefined) {
      this.#captured = Buffer.concat([this.#captured, data]);
      this.#findClose();
      return EMPTY;
    }
    const at = data.indexOf(this.#needle);
    if (at >= 0) {
      this.#captured = data.subarray(at + this.#needle.length);
      this.#findClose();
      return data.subarray(0, at);
    }
    const keep = partialMatchLength(data, this.#needle);
    this.#held = Buffer.from(data.subarray(data.length - keep));
    return data.subarray(0, data.length - keep);
  }

  /** The stream ended without a complete marker: whatever was held back is output after all. */
  flush(): Buffer {
    if (this.done) return EMPTY;
    const rest = this.#captured !== undefined ? Buffer.concat([this.#held, this.#needle, this.#captured]) : this.#held;
    this.#held = EMPTY;
    this.#captured = undefined;
    return rest;
  }

  #findClose(): void {
    const captured = this.#captured!;
    const at = captured.indexOf(this.#close);
    if (at >= 0) {
      this.#payload = captured.subarray(0, at).toString("utf8");
      this.#captured = undefined;
    }
  }

  /** Returns bytes consumed by the PID line (0 if there is none), or -1 when more data is needed. */
  #takePid(data: Buffer): number {
    const prefix = this.#pidPrefix!;
    const compare = Math.min(prefix.length, data.length);
    if (!data.subarray(0, compare).equals(prefix.subarray(0, compare))) return this.#pidDone(0);
    const newline = data.indexOf(0x0a, prefix.length);
    if (newline < 0) return data.length > prefix.length + 32 ? this.#pidDone(0) : -1;
    const match = /^(\d+)(?::(\d*))?__$/.exec(data.subarray(prefix.length, newline).toString("latin1"));
    if (match === null) return this.#pidDone(0);
    this.#pid = Number(match[1]);
    this.#pidStartTime = match[2] || undefined;
    return this.#pidDone(newline + 1);
  }

  /** Only the very first bytes may carry the PID line. */
  #pidDone(consumed: number): number {
    this.#pidPrefix = undefined;
    return consumed;
  }
}

const EMPTY = Buffer.alloc(0);

/** How many trailing bytes of `data` are a proper prefix of `needle`. */
function partialMatchLength(data: Buffer, needle: Buffer): number {
  const max = Math.min(needle.length - 1, data.length);
  for (let length = max; length > 0; length--) {
    if (data[data.length - length] !== needle[0]) continue;
    if (data.subarray(data.length - length).equals(needle.subarray(0, length))) return length;
  }
  return 0;
}
