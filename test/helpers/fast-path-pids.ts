import { expect } from "vitest";
import { eventually } from "./processes.js";

/**
 * Commands that print the fast path's processes from inside a call. `$$`
 * would do on the fast path alone, but a command that expands `$$` takes the
 * plain path (src/core/shell-pid.ts). Keep each a simple command: in a
 * pipeline or `$(…)` `$BASHPID` is that subshell's.
 */

/** The launcher that forked this call: the job's parent. Prints the pid and a newline. */
export const LAUNCHER_PID = "cut -d' ' -f4 /proc/$BASHPID/stat";

/** The helper: the launcher's parent (a job inherits the launcher's `$PPID`). */
export const HELPER_PID = "echo $PPID";

interface Caller {
  execute(
    command: string,
    options?: { timeoutMs?: number; signal?: AbortSignal },
  ): Promise<{ output: string; exitCode: number; cwd: string }>;
}

/**
 * The fast path's first promise on any transport: calls run in one launcher (the same
 * pid twice) and the state a call changes is kept, with the kill sweeps' marks on the job.
 */
export async function expectOneLauncherKeepingState(session: Caller): Promise<void> {
  // The first call may restart the launcher once: the init's dump is not byte-for-byte the fast path's.
  await session.execute("true");
  const pid = (await session.execute(LAUNCHER_PID)).output;
  expect((await session.execute(LAUNCHER_PID)).output).toBe(pid);
  await session.execute("export A=1; f() { echo fn; }; alias al='echo alias'; cd /; umask 027; set -o pipefail");
  expect(await session.execute("echo $A; f; al; pwd; umask; set -o | grep -c 'pipefail.*on'")).toMatchObject({
    exitCode: 0,
    output: "1\nfn\nalias\n/\n0027\n1\n",
    cwd: "/",
  });
  // The session's and the call's marks are on every job, for the kill sweeps.
  expect((await session.execute("env | grep -c '^SHELLWRIGHT_\\(SESSION\\|CALL\\)='")).output).toBe("2\n");
}

interface Runner {
  readonly running: boolean;
  readonly ready: boolean;
  whenReady(): Promise<boolean>;
}

/**
 * A helper killed under a session (as a crash or the OOM killer would): the next calls work on the plain
 * path with the state kept, then the fast path comes back with it. `kill` gets the helper's pid.
 */
export async function expectHelperDeathKeepsState(
  session: Caller,
  runner: () => Runner,
  kill: (helper: string) => void,
): Promise<void> {
  await session.execute("export KEPT=before; cd /");
  const helper = (await session.execute(HELPER_PID)).output.trim();
  expect(Number(helper)).toBeGreaterThan(1);
  kill(helper);
  await eventually(() => runner().running === false, "the helper's death to be seen");
  expect(await session.execute("echo $KEPT; pwd")).toMatchObject({ exitCode: 0, output: "before\n/\n" });
  await eventually(async () => (await runner().whenReady()) === true, "a new helper");
  expect(await session.execute("export KEPT=after; echo $KEPT")).toMatchObject({ output: "after\n" });
  expect((await session.execute("echo $KEPT")).output).toBe("after\n");
  expect(runner().ready).toBe(true);
}

/**
 * A timeout and an interrupt on the fast path answer as on the plain path (124, 130), and neither stopped call
 * commits: the state after them is the one before, its cwd `home`. Each is stopped `afterMs` into a `sleep 30`.
 */
export async function expectStoppedCallsCommitNothing(session: Caller, home: string, afterMs: number): Promise<void> {
  const timedOut = await session.execute("export LOST=1; cd /; sleep 30", { timeoutMs: afterMs });
  expect(timedOut).toMatchObject({ exitCode: 124, timedOut: true, cwd: home });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), afterMs);
  expect(await session.execute("export LOST=2; sleep 30", { signal: controller.signal })).toMatchObject({
    exitCode: 130,
    interrupted: true,
  });
  expect((await session.execute("echo [${LOST-none}]; pwd")).output).toBe(`[none]\n${home}\n`);
}

/** With `fastPath: false` the transport has no fast path and every call is a shell of its own (`$$` differs). */
export async function expectPlainWhenOff(
  open: (options: { fastPath: false }) => Promise<{ session: Caller; transport: { readonly fastPath?: unknown } }>,
): Promise<void> {
  const { session, transport } = await open({ fastPath: false });
  expect(transport.fastPath).toBeUndefined();
  expect((await session.execute("echo $$")).output).not.toBe((await session.execute("echo $$")).output);
}
