/**
 * Reading a request body with a size limit. A body declared larger than the
 * limit is not read at all, and one that grows past it stops being kept, so a
 * client cannot make a server buffer more than the limit.
 */

import type { IncomingMessage } from "node:http";

export const TOO_LARGE = "too-large";

/**
 * The body, or TOO_LARGE once it is over `limitBytes`. After TOO_LARGE the
 * rest of the body is discarded as it arrives (unread by anyone), so the
 * caller should answer 413 with `connection: close`.
 */
export function readBody(request: IncomingMessage, limitBytes: number): Promise<Buffer | typeof TOO_LARGE> {
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limitBytes) return Promise.resolve(TOO_LARGE);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limitBytes) return void chunks.push(chunk);
      request.off("data", onData).off("end", onEnd).off("error", reject);
      // Keep the stream flowing (into nothing) rather than pausing it: a paused
      // upload can stall the client before it gets to read the 413.
      request.on("data", () => undefined).on("error", () => undefined);
      chunks.length = 0;
      resolve(TOO_LARGE);
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks));
    request.on("data", onData).on("end", onEnd).on("error", reject);
  });
}
