/**
 * What Anthropic's bash tool needs to restart "the bash session" on a
 * Shellwright session, which has no shell process to restart: every bash
 * command first notes its call's mark (SHELLWRIGHT_CALL, which every process
 * of a call carries in its environment, core/call-marks.ts) in the session's
 * private directory, and the session's state as the tool first found it is
 * kept there too.
 *
 * A restart then ends the session's background processes (the process
 * registry's: terminal background, exec_command, PTYs), ends every process a
 * bash command started that still runs (found by those marks, however it
 * detached, with the backends' one sweep), and puts the kept state back, so
 * the next command starts in the directory and with the variables the
 * session had then.
 */

import { posix } from "node:path";
import { CALL_MARK, isMarkValue } from "../../core/call-marks.js";
import type { Environment } from "../../core/environment.js";
import { quoteCwd, shellQuote } from "../../core/script.js";
import { sweepScript } from "../../core/sweep-script.js";
import { processRegistry } from "../process/process-registry.js";
import type { HandlerContext } from "../shared/tool-definition.js";
import { scratchDir } from "./scratch-dir.js";

export interface BashState {
  /** The file of the marks of every bash command's call. */
  calls: string;
  /** The snapshot as the first bash command found it; undefined when the session has none. */
  start: string | undefined;
  /** The session's cwd then. */
  cwd: string;
}

const states = new WeakMap<Environment, Promise<BashState>>();

/** Where the session's bash calls are noted, and its kept state; made at the first bash command. */
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
  const dir = await scratchDir(session);
  const calls = `${dir}/bash-calls`;
  const cwd = session.cwd;
  if (!session.snapshotReady) return { calls, start: undefined, cwd };
  const start = `${dir}/bash-start.sh`;
  const result = await session.execute(`command cp -p -- ${shellQuote(session.paths.snapshot)} ${shellQuote(start)}`, {
    isolated: true,
    cwd: "/",
  });
  return { calls, start: result.exitCode === 0 ? start : undefined, cwd };
}

/**
 * The command as the bash tool runs it: in the session, its call's mark and
 * process group noted first. A subshell it leaves running (`( loop ) &`)
 * never execs, so its environment holds only what the call's shell started
 * with: the group finds it.
 */
export function markedCommand(command: string, state: BashState): string {
  const note =
    `{ builtin read -r __sw_st < /proc/$BASHPID/stat; __sw_st=(\${__sw_st##*) }); ` +
    `builtin printf '%s %s\\n' "\${${CALL_MARK}-}" "\${__sw_st[2]-}"; } >> ${shellQuote(state.calls)} 2>/dev/null; builtin unset -v __sw_st`;
  return `${note}; builtin eval -- ${shellQuote(command)}`;
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
  const noted = await session.execute(
    `command cat -- ${shellQuote(state.calls)} 2>/dev/null; : > ${shellQuote(state.calls)}`,
    {
      isolated: true,
      cwd: "/",
    },
  );
  const entries = noted.output.split("\n").map((line) => line.split(" "));
  const marks = [...new Set(entries.map(([mark]) => mark ?? ""))].filter(isMarkValue).map((m) => `${CALL_MARK}=${m}`);
  const groups = [...new Set(entries.map(([, group]) => Number(group)))].filter((g) => Number.isInteger(g) && g > 1);
  const lines: string[] = [];
  if (marks.length > 0) {
    // A group only while its leader (the call's shell) is gone: its id is then never a newcomer's.
    const sweep = sweepScript({ marks, groups, deadLeadersOnly: true }, "TERM", settings.processes.killGraceMs);
    lines.push(`if [[ -d /proc/self ]]; then "$BASH" -c ${shellQuote(sweep)} >/dev/null 2>&1 </dev/null; fi`);
  }
  if (state.start !== undefined) {
    const next = `${posix.dirname(state.start)}/snapshot.next`;
    // A rename, never a write in place: a call reading the snapshot meanwhile sees the old file or the new one whole.
    lines.push(
      `command cp -p -- ${shellQuote(state.start)} ${shellQuote(next)} && command mv -f -- ${shellQuote(next)} ${shellQuote(session.paths.snapshot)}`,
    );
  }
  if (lines.length > 0) await session.execute(lines.join("\n"), { isolated: true, cwd: "/" });
  // The session passes its cwd to every call (the fast path's jobs start there): a call that moves there makes it the kept one.
  await session.execute(`builtin cd -- ${quoteCwd(state.cwd)}`);
}
