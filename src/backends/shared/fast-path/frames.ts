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

/**
 * Splits a byte stream into frames. An output frame ('O') is handed on in
 * pieces as its bytes arrive, each a view of the chunk it came in: a big
 * output frame is never copied together, so a fast command's output costs one
 * allocation per chunk (Node's own read), not two. Every other frame is small
 * and is handed on whole.
 */
export class FrameDecoder {
  /** A header cut across chunks. */
  #header = Buffer.alloc(HEADER_BYTES);
  #headerBytes = 0;
  /** The frame whose payload is arriving, once its header is in. */
  #type: FrameType | undefined;
  #id = 0;
  #remaining = 0;
  /** A non-output frame's payload pieces, joined when complete. */
  #pieces: Buffer[] = [];

  push(chunk: Buffer, onFrame: (frame: Frame) => void): void {
    let offset = 0;
    while (offset < chunk.length || (this.#type !== undefined && this.#remaining === 0)) {
      if (this.#type === undefined) {
        const take = Math.min(HEADER_BYTES - this.#headerBytes, chunk.length - offset);
        if (this.#headerBytes === 0 && take === HEADER_BYTES) {
          this.#start(chunk, offset);
        } else {
          chunk.copy(this.#header, this.#headerBytes, offset, offset + take);
          this.#headerBytes += take;
          if (this.#headerBytes < HEADER_BYTES) return;
          this.#start(this.#header, 0);
        }
        offset += take;
        continue;
      }
      const take = Math.min(this.#remaining, chunk.length - offset);
      const piece = chunk.subarray(offset, offset + take);
      offset += take;
      this.#remaining -= take;
      if (this.#type === "O") {
        if (take > 0) onFrame({ type: "O", id: this.#id, payload: piece });
      } else if (take > 0) {
        this.#pieces.push(piece);
      }
      if (this.#remaining > 0) return;
      if (this.#type !== "O") {
        const payload = this.#pieces.length === 1 ? this.#pieces[0]! : Buffer.concat(this.#pieces);
        onFrame({ type: this.#type, id: this.#id, payload });
      }
      this.#type = undefined;
      this.#pieces = [];
    }
  }

  #start(bytes: Buffer, at: number): void {
    this.#type = String.fromCharCode(bytes[at]!) as FrameType;
    this.#id = bytes.readUInt32BE(at + 1);
    this.#remaining = bytes.readUInt32BE(at + 5);
    this.#headerBytes = 0;
  }
}
