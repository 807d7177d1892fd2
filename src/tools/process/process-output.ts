/**
 * A background process's output in memory: the new bytes of each poll answer
 * appended, at most `bufferChars` of the newest kept. Idempotent and
 * order-free: bytes before the current offset are skipped, and a gap (the
 * read kept only the newest bytes) is counted as dropped, so overlapping polls
 * (a watcher and a poll) never duplicate output.
 */

import { completeUtf8Length, type BackgroundProcess } from "./background-process.js";
import type { PollAnswer } from "./process-scripts.js";

export function takeOutput(process: BackgroundProcess, answer: PollAnswer, bufferChars: number): void {
  if (answer.start > process.offset) {
    process.droppedChars += answer.start - process.offset;
    process.carry = new Uint8Array();
    process.offset = answer.start;
  }
  const skip = process.offset - answer.start;
  if (skip >= answer.data.length) return;
  const data = answer.data.subarray(skip);
  process.offset += data.length;
  const joined = process.carry.length > 0 ? Buffer.concat([process.carry, data]) : Buffer.from(data);
  const complete = completeUtf8Length(joined);
  process.carry = joined.subarray(complete);
  process.output += joined.subarray(0, complete).toString("utf8");
  const excess = process.output.length - bufferChars;
  if (excess > 0) {
    process.output = process.output.slice(excess);
    process.droppedChars += excess;
  }
}

/** The process ended: the bytes of a character its last read cut are shown as they are. */
export function flushCarry(process: BackgroundProcess): void {
  if (process.carry.length === 0) return;
  process.output += Buffer.from(process.carry).toString("utf8");
  process.carry = new Uint8Array();
}
