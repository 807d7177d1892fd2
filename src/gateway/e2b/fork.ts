/**
 * What E2B's fork and snapshots need of the backend behind serve: a fork of a
 * session that copies its files (docs/branching.md's table), since E2B's
 * forks and snapshots are independent copies of the whole sandbox. Where a
 * fork copies only the shell state, a forked sandbox would share its
 * parent's files, so both are refused with 501 rather than half done.
 */

import { CheckpointError } from "../../core/errors.js";
import { E2bError, notImplemented } from "./errors.js";
import type { SandboxEntry } from "./entry.js";

/** The backends whose fork gives each child its own copy of every file (docs/branching.md). */
const FORKS_FILES = new Set(["docker", "modal", "daytona"]);

/** The most forks one request makes: a fork of the environment makes at most 100 (core/checkpoint.ts). */
const MAX_COUNT = 100;
/** openapi.yml's SandboxForkRequest: a fork lives 15 s unless the request says otherwise. */
const DEFAULT_FORK_TIMEOUT_S = 15;

/** Refuses `what` (E2B's fork, a snapshot) for a sandbox whose backend cannot copy its files. */
export function checkCopiesFiles(entry: SandboxEntry, what: string): void {
  const backend = entry.record.session.backend;
  if (!FORKS_FILES.has(backend))
    throw notImplemented(
      `${what} on the ${backend} backend (a fork there would share the sandbox's files; serve on docker gives each its own)`,
    );
}

export interface ForkRequest {
  count: number;
  timeoutS: number;
}

/** The fork request's body, checked before the sandbox is looked up (as E2B does: a bad count is 400 first). */
export function forkRequest(body: Record<string, unknown>, timeoutSeconds: (value: unknown) => number): ForkRequest {
  const count = body.count ?? 1;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > MAX_COUNT)
    throw new E2bError(400, `count must be a whole number from 1 to ${MAX_COUNT}, got ${JSON.stringify(count)}`);
  const timeout = body.timeout ?? DEFAULT_FORK_TIMEOUT_S;
  return { count, timeoutS: timeoutSeconds(timeout) };
}

/** How long a fork or a snapshot waits for the session's running commands before it answers 409. */
const BUSY_WAIT_MS = 5000;

/**
 * `branch` (a fork of the sandbox's session), waiting for the commands it runs now to end rather than refusing at
 * once. Serve's own short calls in the session (a stdin written into a process's FIFO, a process's end recorded)
 * count as running commands, and E2B's fork never refuses for a running process: without the wait, a fork beside
 * a process with an open stdin (the e2b backend's fast path) was refused at random. A command of a `session`
 * sandbox that runs for longer still gives 409.
 */
export async function whenIdle<T>(branch: () => Promise<T>, signal: AbortSignal): Promise<T> {
  const giveUpAt = Date.now() + BUSY_WAIT_MS;
  for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
    try {
      return await branch();
    } catch (error) {
      if (!(error instanceof CheckpointError) || error.reason !== "busy" || Date.now() + pause > giveUpAt) throw error;
      if (signal.aborted) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
