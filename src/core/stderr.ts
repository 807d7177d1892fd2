/**
 * The one way Shellwright writes to its own process's stderr (warnings, the
 * CLI's and the servers' notes). It never blocks and never queues.
 *
 * Why: a stdio MCP host often never reads the server's stderr. Once that
 * pipe's buffer (64 KiB on Linux) is full, `process.stderr.write` keeps every
 * later message in memory and the process cannot exit until someone reads
 * it, which may be never. Here a message that does not fit now is dropped
 * (counted, and said with the next one that fits): a warning nobody can read
 * is worth less than an owner that ends.
 *
 * How: Node puts a pipe or socket stderr in non-blocking mode when it opens
 * `process.stderr`, so a direct `writeSync` on fd 2 answers EAGAIN when the
 * pipe is full instead of waiting. A file never fills; a terminal is written
 * as Node itself writes it.
 */

import { writeSync } from "node:fs";

const STDERR_FD = 2;
let droppedBytes = 0;

/** Writes `text` to stderr now, or drops it when stderr cannot take it without waiting. */
export function writeStderr(text: string | Uint8Array): void {
  let stream: NodeJS.WriteStream;
  try {
    // Opening the stream is what makes a pipe's fd non-blocking (libuv's uv_pipe_open).
    stream = process.stderr;
  } catch {
    return;
  }
  // Bytes Node already queued mean the pipe is full: writing past them would reorder.
  if (stream.writableLength > 0) {
    droppedBytes += Buffer.byteLength(text);
    return;
  }
  const note =
    droppedBytes > 0
      ? `shellwright: ${droppedBytes} bytes of earlier messages to stderr were dropped (nobody read them)\n`
      : "";
  const noteBytes = Buffer.byteLength(note);
  const bytes = Buffer.concat([Buffer.from(note), typeof text === "string" ? Buffer.from(text) : text]);
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(STDERR_FD, bytes, written);
  } catch {
    // EAGAIN (full), EPIPE (nobody will ever read it), EBADF (closed): the rest is lost.
  }
  if (written >= noteBytes) droppedBytes = bytes.length - written;
  else droppedBytes += bytes.length - noteBytes;
}
