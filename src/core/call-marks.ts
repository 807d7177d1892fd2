/**
 * The marks every process of a call carries in its environment, so a kill can
 * find it however it detached (a new session, a new process group, a parent
 * that died): one value per call and one per session, random, and never the
 * session id that appears in the wrapper's script.
 *
 * They live in core because the snapshot must never store them (a restored
 * mark would tag the next calls with an old one): script.ts drops them before
 * the dump. Backends put them into the launch environment.
 */

import { randomBytes } from "node:crypto";

export const CALL_MARK = "SHELLWRIGHT_CALL";
export const SESSION_MARK = "SHELLWRIGHT_SESSION";

export interface CallMarks {
  session: string;
  call: string;
}

// Drawn from a pool: one randomBytes per 512 marks instead of one per call (a
// small synchronous randomBytes costs several microseconds, a fast call about a millisecond).
const POOL_BYTES = 9 * 512;
let pool = Buffer.alloc(0);
let poolOffset = 0;

export function newMarkValue(): string {
  if (poolOffset + 9 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  poolOffset += 9;
  return pool.toString("base64url", poolOffset - 9, poolOffset);
}

/**
 * A session that outlives its process (a CLI named session: each `shellwright exec` is a new process) keeps one
 * session mark for all of them in this file of its state dir, so `shellwright close NAME` finds every process
 * any of them started, however it detached.
 */
export const SESSION_MARK_FILE = "mark";

/** True for what newMarkValue() makes (a mark file read back is checked with it). */
export function isMarkValue(value: string): boolean {
  return /^[A-Za-z0-9_-]{12}$/.test(value);
}

export function callMarks(session: string): CallMarks {
  return { session, call: newMarkValue() };
}

/** `NAME=value` entries, as /proc/PID/environ holds them and as `env` takes them on its command line. */
export function markAssignments(marks: CallMarks): string[] {
  return [`${SESSION_MARK}=${marks.session}`, `${CALL_MARK}=${marks.call}`];
}

export function markEnv(marks: CallMarks): Record<string, string> {
  return { [SESSION_MARK]: marks.session, [CALL_MARK]: marks.call };
}

/**
 * Bash that drops both marks before the dump, whatever the command made of
 * them: a nameref goes itself (`unset -v` would unset its target, the user's
 * variable, and leave the reference to be saved), then the variables.
 */
export const UNSET_MARKS = `builtin unset -n ${CALL_MARK} ${SESSION_MARK} 2>/dev/null; builtin unset -v ${CALL_MARK} ${SESSION_MARK} 2>/dev/null`;
