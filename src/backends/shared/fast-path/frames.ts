/**
 * The framed protocol between Node and the fast-path helper (native/swmux.c):
 * `type:u8 id:u32be len:u32be payload`, the same in both directions. Binary
 * safe, so output needs no encoding and no marker scanning, and any number
 * of calls interleave on one byte stream.
 */

export const HEADER_BYTES = 9;

export type FrameType = "R" | "K" | "Q" | "H" | "B" | "S" | "O" | "X";

export interface Frame {
  type: FrameType;
  id: number;
  payload: Buffer;
}

export function encodeFrame(type: FrameType, id: number, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header[0] = type.charCodeAt(0);
  header.writeUInt32BE(id, 1);
  header.writeUInt32BE(payload.length, 5);
  return payload.length === 0 ? header : Buffer.concat([header, payload]);
}

/** A run request: u8 hasStdin, u32be stdin length, stdin, then the job script. */
export function encodeRun(id: number, script: string, stdin: Uint8Array | undefined): Buffer {
  const head = Buffer.alloc(5);
  head[0] = stdin === undefined ? 0 : 1;
  head.writeUInt32BE(stdin?.length ?? 0, 1);
  return encodeFrame("R", id, Buffer.concat([head, stdin ?? new Uint8Array(0), Buffer.from(script)]));
}

/** Splits a byte stream into frames; keeps at most one partial frame. */
export class FrameDecoder {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** Bytes the partial frame needs in all, once its header is in (0: not known yet). */
  #needed = 0;

  push(chunk: Buffer, onFrame: (frame: Frame) => void): void {
    let buffer = chunk;
    if (this.#pendingBytes > 0) {
      this.#pending.push(chunk);
      this.#pendingBytes += chunk.length;
      if (this.#pendingBytes < HEADER_BYTES) return;
      // Copy a big frame's pieces together once, when all of it is in.
      if (this.#needed === 0) {
        const head = Buffer.concat(this.#pending);
        this.#pending = [head];
        this.#needed = HEADER_BYTES + head.readUInt32BE(5);
      }
      if (this.#pendingBytes < this.#needed) return;
      buffer = this.#pending.length > 1 ? Buffer.concat(this.#pending) : this.#pending[0]!;
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#needed = 0;
    }
    let offset = 0;
    while (buffer.length - offset >= HEADER_BYTES) {
      const length = buffer.readUInt32BE(offset + 5);
      if (buffer.length - offset < HEADER_BYTES + length) break;
      onFrame({
        type: String.fromCharCode(buffer[offset]!) as FrameType,
        id: buffer.readUInt32BE(offset + 1),
        payload: buffer.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + length),
      });
      offset += HEADER_BYTES + length;
    }
    if (offset < buffer.length) {
      const rest = buffer.subarray(offset);
      this.#pending = [rest];
      this.#pendingBytes = rest.length;
    }
  }
}
