/**
 * The framed protocol between Node and the fast-path helper (native/swmux.c),
 * as protocol.ts defines it: both ends of it in Node. Binary safe, so output
 * needs no encoding and no marker scanning, and any number of calls
 * interleave on one byte stream. Each direction numbers and tags its frames:
 * a frame that is not the helper's (something wrote into the channel) is a
 * ProtocolViolation, never a result.
 */

import { createHmac } from "node:crypto";
import { describeSaveFailure } from "../../../core/marker-payload.js";
import type { FastCallEnd } from "../../../core/transport.js";
import {
  EXIT_FIELD,
  EXIT_FLAG,
  EXIT_TEXT_AT,
  FROM_HELPER,
  STARTED,
  HEADER_BYTES,
  REPLY,
  REPLY_LIMITS,
  REQUEST,
  RUN_FLAG,
  TAG_BYTES,
  TAGGED_HEADER_BYTES,
  TO_HELPER,
  type ReplyType,
  type RequestType,
} from "./protocol.js";

export interface Frame {
  type: ReplyType;
  id: number;
  payload: Buffer;
}

/** The helper's stream broke the protocol: the helper is not to be trusted any more. */
export class ProtocolViolation extends Error {
  override readonly name = "ProtocolViolation";
}

function tagOf(key: Buffer, direction: number, header: Buffer, at: number, payload: Uint8Array | undefined): Buffer {
  const hmac = createHmac("sha256", key);
  hmac.update(Uint8Array.of(direction));
  hmac.update(header.subarray(at, at + TAGGED_HEADER_BYTES));
  if (payload !== undefined && payload.length > 0) hmac.update(payload);
  return hmac.digest().subarray(0, TAG_BYTES);
}

/** The frames whose payload is a program's own bytes: handed on in pieces as they arrive, and not tagged. */
const UNTAGGED_OUTPUT: ReadonlySet<string> = new Set([REPLY.output, REPLY.stderr, REPLY.procOutput, REPLY.procStderr]);

const EXIT_FLAGS = EXIT_FLAG.committed | EXIT_FLAG.killed | EXIT_FLAG.groupLeft;

/** An exit frame's payload (protocol.ts, EXIT_FIELD) as the call's end, decoded once, here. */
export function decodeExit(payload: Buffer): FastCallEnd {
  const flags = payload[EXIT_FIELD.flags]!;
  const started = payload[EXIT_FIELD.started]!;
  if ((flags & ~EXIT_FLAGS) !== 0 || (started !== STARTED.no && started !== STARTED.yes && started !== STARTED.maybe))
    throw new ProtocolViolation(`an exit with flags ${flags} and started ${started}`);
  const committed = (flags & EXIT_FLAG.committed) !== 0;
  const text = payload.subarray(EXIT_TEXT_AT).toString("utf8");
  return {
    status: payload[EXIT_FIELD.status]!,
    committed,
    killed: (flags & EXIT_FLAG.killed) !== 0,
    started: started === STARTED.yes,
    ...(started === STARTED.maybe ? { uncertain: true } : {}),
    groupLeft: (flags & EXIT_FLAG.groupLeft) !== 0,
    ...(text === "" ? {} : committed ? { cwd: text } : { saveFailed: describeSaveFailure(text) }),
  };
}

/** An exit frame's payload as swmux.c writes it (tests that play the helper). */
export function encodeExit(end: {
  status: number;
  committed?: boolean;
  killed?: boolean;
  started?: keyof typeof STARTED;
  groupLeft?: boolean;
  text?: string;
}): Buffer {
  const payload = Buffer.concat([Buffer.alloc(EXIT_TEXT_AT), Buffer.from(end.text ?? "")]);
  payload[EXIT_FIELD.status] = end.status;
  payload[EXIT_FIELD.flags] =
    (end.committed ? EXIT_FLAG.committed : 0) |
    (end.killed ? EXIT_FLAG.killed : 0) |
    (end.groupLeft ? EXIT_FLAG.groupLeft : 0);
  payload[EXIT_FIELD.started] = STARTED[end.started ?? "yes"];
  return payload;
}

/**
 * Frames numbered and tagged with the helper's key: Node's requests, or (with
 * FROM_HELPER, for tests that play the helper) its replies.
 */
export class FrameWriter {
  readonly #key: Buffer;
  readonly #direction: number;
  #seq = 0;

  constructor(key: Buffer, direction: number = TO_HELPER) {
    this.#key = key;
    this.#direction = direction;
  }

  frame(type: RequestType | ReplyType, id: number, payload: Uint8Array = new Uint8Array(0)): Buffer {
    const header = Buffer.alloc(HEADER_BYTES);
    header[0] = type.charCodeAt(0);
    header.writeUInt32BE(id, 1);
    header.writeUInt32BE(payload.length, 5);
    header.writeUInt32BE(this.#seq++ >>> 0, 9);
    const tagged = !UNTAGGED_OUTPUT.has(type) || this.#direction !== FROM_HELPER;
    tagOf(this.#key, this.#direction, header, 0, tagged ? payload : undefined).copy(header, TAGGED_HEADER_BYTES);
    return payload.length === 0 ? header : Buffer.concat([header, payload]);
  }

  /** A run request: u8 hasStdin, u32be stdin length, stdin, then the job script. */
  run(id: number, script: string, stdin: Uint8Array | undefined, separateStreams = false): Buffer {
    const head = Buffer.alloc(5);
    head[0] = (stdin === undefined ? 0 : RUN_FLAG.stdin) | (separateStreams ? RUN_FLAG.stderrApart : 0);
    head.writeUInt32BE(stdin?.length ?? 0, 1);
    return this.frame(REQUEST.run, id, Buffer.concat([head, stdin ?? new Uint8Array(0), Buffer.from(script)]));
  }
}

/**
 * Splits the helper's byte stream into frames and checks each: a known type,
 * a length within its bounds, the next number, the right tag (checked before
 * any of it is handed on). An output frame ('O', 'e' for stderr apart, 'o' a process's) is handed on in pieces as
 * its bytes arrive, each a view of the chunk it came in: a big output frame
 * is never copied together. Every other frame is small and is handed on whole.
 */
export class FrameDecoder {
  readonly #key: Buffer;
  #seq = 0;
  /** A header cut across chunks. */
  #header = Buffer.alloc(HEADER_BYTES);
  #headerBytes = 0;
  /** The frame whose payload is arriving, once its header is in. */
  #type: ReplyType | undefined;
  #id = 0;
  #remaining = 0;
  #tag = Buffer.alloc(TAG_BYTES);
  #headerCopy = Buffer.alloc(HEADER_BYTES);
  /** A non-output frame's payload pieces, joined when complete. */
  #pieces: Buffer[] = [];

  constructor(key: Buffer) {
    this.#key = key;
  }

  /** Throws ProtocolViolation at the first frame that is not the helper's. */
  push(chunk: Buffer, onFrame: (frame: Frame) => void): void {
    let offset = 0;
    while (offset < chunk.length || (this.#type !== undefined && this.#remaining === 0)) {
      if (this.#type === undefined) {
        const take = Math.min(HEADER_BYTES - this.#headerBytes, chunk.length - offset);
        chunk.copy(this.#header, this.#headerBytes, offset, offset + take);
        this.#headerBytes += take;
        offset += take;
        if (this.#headerBytes < HEADER_BYTES) return;
        this.#start();
        continue;
      }
      const take = Math.min(this.#remaining, chunk.length - offset);
      const piece = chunk.subarray(offset, offset + take);
      offset += take;
      this.#remaining -= take;
      if (UNTAGGED_OUTPUT.has(this.#type)) {
        if (take > 0) onFrame({ type: this.#type, id: this.#id, payload: piece });
      } else if (take > 0) {
        this.#pieces.push(piece);
      }
      if (this.#remaining > 0) return;
      if (!UNTAGGED_OUTPUT.has(this.#type)) {
        const payload = this.#pieces.length === 1 ? this.#pieces[0]! : Buffer.concat(this.#pieces as Uint8Array[]);
        const tag = tagOf(this.#key, FROM_HELPER, this.#headerCopy, 0, payload);
        if (!tag.equals(this.#tag)) throw new ProtocolViolation(`frame ${this.#seq - 1} has a wrong tag`);
        onFrame({ type: this.#type, id: this.#id, payload });
      }
      this.#type = undefined;
      this.#pieces = [];
    }
  }

  #start(): void {
    const header = this.#header;
    this.#headerBytes = 0;
    const type = String.fromCharCode(header[0]!) as ReplyType;
    const limits = REPLY_LIMITS[type] as readonly [number, number] | undefined;
    if (limits === undefined) throw new ProtocolViolation(`unknown frame type 0x${header[0]!.toString(16)}`);
    const length = header.readUInt32BE(5);
    if (length < limits[0] || length > limits[1])
      throw new ProtocolViolation(`a '${type}' frame of ${length} bytes (${limits[0]} to ${limits[1]} allowed)`);
    const seq = header.readUInt32BE(9);
    if (seq !== this.#seq >>> 0) throw new ProtocolViolation(`frame ${seq} where ${this.#seq} was due`);
    this.#seq++;
    header.copy(this.#tag, 0, TAGGED_HEADER_BYTES, HEADER_BYTES);
    header.copy(this.#headerCopy);
    // An output frame's header is checked now; its payload is the command's own bytes.
    if (UNTAGGED_OUTPUT.has(type) && !tagOf(this.#key, FROM_HELPER, header, 0, undefined).equals(this.#tag))
      throw new ProtocolViolation(`frame ${seq} has a wrong tag`);
    this.#type = type;
    this.#id = header.readUInt32BE(1);
    this.#remaining = length;
  }
}
