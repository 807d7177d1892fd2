/**
 * The helper that allocates pseudo-terminals (`swmux -p`, native/pty.c): the
 * session's one copy inside the backend (Environment.helperPath), which is
 * the fast path's own when it has one, else copied in once through
 * `execute`. The tools only ask the contract where it is.
 */

import type { Environment } from "../../core/environment.js";
import { ProcessError } from "../../core/errors.js";
import type { PtySize } from "./background-process.js";
import type { PtyLaunch } from "./pty-scripts.js";

/** The helper's path inside the backend, installed there on first use. */
export function ptyHelper(session: Environment): Promise<string> {
  if (session.helperPath === undefined)
    return Promise.reject(
      new ProcessError(`pty=true needs an environment that can install the helper (Environment.helperPath)`),
    );
  return session.helperPath();
}

/** How the helper starts a program under a PTY of `size` in this session, the helper installed first. */
export async function ptyLaunch(session: Environment, size: PtySize, graceMs: number): Promise<PtyLaunch> {
  return {
    helper: await ptyHelper(session),
    cols: size.cols,
    rows: size.rows,
    graceMs,
    snapshot: session.snapshotReady ? session.paths.snapshot : undefined,
    ctl: undefined,
  };
}
