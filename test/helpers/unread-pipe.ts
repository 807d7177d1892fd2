/**
 * A pipe nobody reads, as a stdio MCP host that never drains the server's
 * stderr gives it: a FIFO whose read end the test holds open (so writes do
 * not fail with EPIPE) and never reads until it asks for what is in it.
 */

import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface UnreadPipe {
  /** The write end, for a child's stdio. */
  writeFd: number;
  /** Writes into the pipe until it is full (as a chatty earlier life of the owner would have). */
  fill(): void;
  /** Reads everything the pipe holds now (the test's own look, after the fact). */
  drain(): string;
  close(): void;
}

export function unreadPipe(): UnreadPipe {
  const dir = mkdtempSync(join(tmpdir(), "sw-unread-pipe-"));
  const path = join(dir, "fifo");
  execFileSync("mkfifo", [path]);
  // Non-blocking: opening the read end does not wait for a writer, and drain() stops when it is empty.
  const readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(path, constants.O_WRONLY);
  return {
    writeFd,
    fill() {
      const filler = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
      const block = Buffer.alloc(4096, ".");
      // 4 KiB writes are all or nothing: 1-byte ones fill what they leave.
      try {
        for (const size of [block.length, 1]) {
          try {
            for (;;) writeSync(filler, block, 0, size);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
          }
        }
      } finally {
        closeSync(filler);
      }
    },
    drain() {
      const chunks: Buffer[] = [];
      const buffer = Buffer.alloc(65536);
      for (;;) {
        let n: number;
        try {
          n = readSync(readFd, buffer);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "EAGAIN") break;
          throw error;
        }
        if (n === 0) break;
        chunks.push(Buffer.from(buffer.subarray(0, n)));
      }
      return Buffer.concat(chunks).toString("utf8");
    },
    close() {
      for (const fd of [readFd, writeFd]) {
        try {
          closeSync(fd);
        } catch {
          // already closed
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
