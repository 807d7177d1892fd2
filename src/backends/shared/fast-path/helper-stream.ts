/**
 * What a helper client needs of the backend's channel to its helper (the byte stream, however it is carried), and
 * the watchdog's limits over it (helper-client.ts).
 */

import type { Readable, Writable } from "node:stream";

/** The byte stream to a helper, however the backend carries it. */
export interface HelperStream {
  readonly input: Writable;
  readonly output: Readable;
  /** Resolves when the helper is gone (its stream ended or its process exited). */
  readonly closed: Promise<void>;
  /** Best effort, never throws. */
  kill(): void;
  /** Keep this process alive while calls are open (true), not while idle (false). */
  hold?(busy: boolean): void;
  /** Continues the helper if a command stopped it (SIGCONT from outside its reach); best effort. */
  resume?(): void;
  /**
   * True while the whole box is frozen from outside (a paused container): the helper's silence is not its own,
   * and it is waited for, as the plain path's call in that box is, instead of given up as stuck.
   */
  frozen?(): Promise<boolean>;
  /** The last lines the helper wrote on stderr (why it failed), when the backend keeps them. */
  stderrTail?(): string;
}

/** Why a helper was given up, for the warning the session shows once. */
export interface HelperFailure {
  kind: "violation" | "stuck";
  message: string;
}

/**
 * Silence (no frame) while calls are open before a ping, before a resume,
 * before giving up. A helper still reading a big request says it is alive
 * (`A`, every 250 ms), so a slow delivery is not silence.
 */
export const PING_AFTER_MS = 1000;
export const RESUME_AFTER_MS = 1500;
export const GIVE_UP_AFTER_MS = 10_000;

/** The watchdog's limits (tests shorten them). */
export interface HelperTiming {
  pingAfterMs: number;
  resumeAfterMs: number;
  giveUpAfterMs: number;
}
export const DEFAULT_TIMING: HelperTiming = {
  pingAfterMs: PING_AFTER_MS,
  resumeAfterMs: RESUME_AFTER_MS,
  giveUpAfterMs: GIVE_UP_AFTER_MS,
};
