/**
 * What Anthropic's bash tool needs to restart "the bash session" on a
 * Shellwright session, which has no shell process to restart: every command
 * it runs carries a mark of the session's own (SHELLWRIGHT_BASH_ID, like
 * SHELLWRIGHT_BG_ID on background processes), and the session's state as the
 * tool first found it is kept in the session's private directory.
 *
 * A restart then ends the session's background processes (the process
 * registry's: terminal background, exec_command, PTYs), ends every process a
 * bash command started that still runs (found by the mark, however it
 * detached, with the backends' one sweep), and puts the kept state back over
 * the snapshot, so the next command starts in the directory and with the
 * variables the session had then.
 */

import { posix } from "node:path";
import { newMarkValue } from "../../core/call-marks.js";
import type { Environment } from "../../core/environment.js";
import { quoteCwd, shellQuote } from "../../core/script.js";
import { sweepScript } from "../../core/sweep-script.js";
import { processRegistry } from "../process/process-registry.js";
import type { HandlerContext } from "../shared/tool-definition.js";
import { scratchDir } from "./scratch-dir.js";

export const BASH_MARK_VARIABLE = "SHELLWRIGHT_BASH_ID";

interface BashState {
  mark: string;
  /** The snapshot as the first bash command found it; undefined when the session has none. */
  start: string | undefined;
  /** The session's cwd then. */
  cwd: string;
}

const states = new WeakMap<Environment, Promise<BashState>>();

/** The session's mark and kept state, made at the first bash command. */
export function bashState(session: Environment): Promise<BashState> {
  let state = states.get(session);
  if (state === undefined) {
    state = keepStart(session);
    states.set(session, state);
    state.catch(() => states.delete(session));
  }
  return state;
}

async function keepStart(session: Environment): Promise<BashState> {
  const mark = newMarkValue();
  const cwd = session.cwd;
  if (!session.snapshotReady) return { mark, start: undefined, cwd };
  const start = `${await scratchDir(session)}/bash-start.sh`;
  const result = await session.execute(`command cp -p -- ${shellQuote(session.paths.snapshot)} ${shellQuote(start)}`, {
    isolated: true,
    cwd: "/",
  });
  return { mark, start: result.exitCode === 0 ? start : undefined, cwd };
}

/** The command as the bash tool runs it: in the session, every process it starts carrying the mark. */
export function markedCommand(command: string, mark: string): string {
  // An assignment before a builtin is exported to what it runs, and gone when it returns: the snapshot never keeps it.
  return `${BASH_MARK_VARIABLE}=${mark} builtin eval -- ${shellQuote(command)}`;
}

export async function restartBash(context: HandlerContext): Promise<void> {
  const { session, settings } = context;
  const registry = processRegistry(session, settings.processes);
  await Promise.all(
    registry
      .all()
      .filter((p) => p.status === "running")
      .map((p) => registry.kill(p)),
  );
  const state = await bashState(session);
  const sweep = sweepScript({ marks: [`${BASH_MARK_VARIABLE}=${state.mark}`] }, "TERM", settings.processes.killGraceMs);
  const lines = [`if [[ -d /proc/self ]]; then "$BASH" -c ${shellQuote(sweep)} >/dev/null 2>&1 </dev/null; fi`];
  if (state.start !== undefined) {
    const snapshot = session.paths.snapshot;
    const next = `${posix.dirname(state.start)}/snapshot.next`;
    // A rename, never a write in place: a call reading the snapshot meanwhile sees the old file or the new one whole.
    lines.push(
      `command cp -p -- ${shellQuote(state.start)} ${shellQuote(next)} && command mv -f -- ${shellQuote(next)} ${shellQuote(snapshot)}`,
    );
  }
  await session.execute(lines.join("\n"), { isolated: true, cwd: "/" });
  // The session passes its cwd to every call (the fast path's jobs start there): a call that moves there makes it the kept one.
  await session.execute(`builtin cd -- ${quoteCwd(state.cwd)}`);
}
