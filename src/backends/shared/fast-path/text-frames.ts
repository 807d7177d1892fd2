/**
 * The helper's text mode (`swmux -t`, docs/fast-path.md "Daytona"): each
 * frame travels as one line of base64, both ways, over channels that carry
 * text only. These turn our frames into such lines and the helper's lines
 * back into frame bytes.
 */

import { Transform, type TransformCallback } from "node:stream";
import { HEADER_BYTES, KEY_BYTES } from "./protocol.js";

/** Bytes in (the key, then whole frames, in any chunking), one base64 line each out. */
export function framesToLines(): Transform {
  let pending: Buffer = Buffer.alloc(0);
  let keySent = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let offset = 0;
      if (!keySent) {
        if (pending.length < KEY_BYTES) return done();
        this.push(`${pending.subarray(0, KEY_BYTES).toString("base64")}\n`);
        keySent = true;
        offset = KEY_BYTES;
      }
      while (pending.length - offset >= HEADER_BYTES) {
        const end = offset + HEADER_BYTES + pending.readUInt32BE(offset + 5);
        if (end > pending.length) break;
        this.push(`${pending.subarray(offset, end).toString("base64")}\n`);
        offset = end;
      }
      pending = pending.subarray(offset);
      done();
    },
  });
}

/** Text in (base64 lines in any chunking), the decoded bytes out. */
export function linesToBytes(): Transform {
  let partial = "";
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      const text = partial + chunk.toString("latin1");
      const last = text.lastIndexOf("\n");
      partial = text.slice(last + 1);
      if (last >= 0) {
        for (const line of text.slice(0, last).split("\n")) if (line !== "") this.push(Buffer.from(line, "base64"));
      }
      done();
    },
  });
}
