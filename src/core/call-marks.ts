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

export const newMarkValue = (): string => randomBytes(9).toString("base64url");

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
