/**
 * A kill that comes early: an interrupt or a timeout tens of milliseconds
 * after execute() was called, before the call's shell, its PID line or its
 * child may exist. The call starts a `setsid sleep` (a new session, so no
 * group kill reaches it) and waits; whenever the kill lands, nothing the call
 * started may be alive once execute() has answered, including a child that
 * forks or calls setsid after the kill arrived.
 *
 * The check runs where the processes run (a fresh call of the same session:
 * the container, the sandbox's pid namespace, the ssh host) and looks for
 * the call's sleeps by their unique argument, so it also finds one whose PID
 * never reached the file.
 */

import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../../src/index.js";
import { compatBackends } from "../../compat/backends.js";
import { HELPER_PID, LAUNCHER_PID } from "../../helpers/fast-path-pids.js";
import { freeze, noFreezer, type Frozen } from "../../helpers/freezer.js";
import { noLocalHelper } from "../../helpers/native-helper.js";
import { alive, eventually } from "../../helpers/processes.js";
import { useScratchDir } from "../../helpers/scratch.js";

/** The entries whose kill takes a path of its own (gateway: the cancel over HTTP; the others reuse one of these). */
const KILL_PATHS = new Set([
  "local",
  "local-plain",
  "local-sandbox",
  "local-sandbox-plain",
  "ssh",
  "ssh-plain",
  "docker",
  "docker-plain",
  "gateway",
  "gateway-plain",
  "e2b",
  "e2b-plain",
]);

const ABORT_DELAYS_MS = [0, 5, 20, 40, 60, 100];
const TIMEOUTS_MS = [1, 40, 80];

/** Prints the PID of each live (not zombie) process whose command line is `sleep ARG` for one of `args`. */
const sleepersScript = (args: number[]): string =>
  [
    "for f in /proc/[0-9]*; do",
    `  { mapfile -d '' -t c < "$f/cmdline"; } 2>/dev/null || continue`,
    `  [[ \${#c[@]} == 2 && \${c[0]##*/} == sleep && " ${args.join(" ")} " == *" \${c[1]} "* ]] || continue`,
    '  { read -r s < "$f/stat"; } 2>/dev/null || continue',
    "  s=${s##*) }; [[ $s == Z* ]] || echo ${f#/proc/}",
    "done; true",
  ].join("\n");

for (const backend of compatBackends.filter((entry) => KILL_PATHS.has(entry.name))) {
  describe.skipIf(!backend.enabled)(`an early kill: ${backend.name}`, () => {
    let env: Environment;
    // Unique sleep arguments per case: a survivor of one case is not taken for another's.
    let next = 300_000 + (process.pid % 1000) * 100;

    beforeAll(async () => {
      env = await backend.create({ cwd: "/tmp", killGraceMs: 200 });
      // The fast path's helper is ready once a call has gone through it.
      await env.execute("true");
    });
    afterAll(async () => {
      await env?.close();
    });

    /** The call, its setsid'ed sleep and its own foreground sleep, each with an argument of this case. */
    const call = (): { command: string; args: number[] } => {
      const detached = next++;
      const foreground = next++;
      return {
        command: `setsid sleep ${detached} >/dev/null 2>&1 & sleep ${foreground}`,
        args: [detached, foreground],
      };
    };

    const expectNoneLeft = async (args: number[]): Promise<void> => {
      const found = async (): Promise<string[]> => {
        const result = await env.execute(sleepersScript(args));
        return result.output.split("\n").filter((line) => /^\d+$/.test(line));
      };
      let left: string[] = [];
      // A brief poll (a killed process may take a moment to be reaped), not a timing measure.
      await eventually(async () => (left = await found()).length === 0, "the call's processes to be gone", 3000).catch(
        () => undefined,
      );
      if (left.length > 0) await env.execute(`kill -KILL ${left.join(" ")}`);
      expect(left, `processes of the call still alive: ${left.join(" ")}`).toEqual([]);
    };

    it.each(ABORT_DELAYS_MS)("an interrupt %i ms after the call leaves none of its processes", async (delayMs) => {
      const { command, args } = call();
      const controller = new AbortController();
      const running = env.execute(command, { signal: controller.signal, timeoutMs: 60_000 });
      if (delayMs === 0) controller.abort();
      else setTimeout(() => controller.abort(), delayMs);
      const result = await running;
      expect(result.interrupted).toBe(true);
      await expectNoneLeft(args);
    });

    it.each(TIMEOUTS_MS)("a timeout of %i ms leaves none of the call's processes", async (timeoutMs) => {
      const { command, args } = call();
      const result = await env.execute(command, { timeoutMs });
      expect(result.timedOut).toBe(true);
      await expectNoneLeft(args);
    });
  });
}

/**
 * The fast path's widest window, held open: the kill reaches the helper before its launcher has forked the job
 * (the launcher is frozen), and the job then runs the command for a while before the helper, frozen in turn, hears
 * of its start and kills its group. The setsid'ed child it forked meanwhile is out of that group.
 */
describe.skipIf(noFreezer !== undefined || noLocalHelper !== undefined)(
  "an early kill: a fast-path job that starts after its kill",
  () => {
    const scratch = useScratchDir("shellwright-early-kill-");

    it.each([
      {
        what: "a child it moved to a new session",
        command: (file: string) => `setsid sleep 300 >/dev/null 2>&1 & echo $! > ${file}; wait`,
      },
      {
        // The helper's TERM at the job's start is ignored: KILL must follow, and execute() must not wait for an end.
        what: "a job that ignores TERM",
        command: (file: string) => `trap '' TERM; echo $BASHPID > ${file}; sleep 300`,
      },
    ])("leaves none of the call's processes once execute() answers: $what", async ({ command }) => {
      const env = await createEnvironment({
        backend: "local",
        cwd: "/tmp",
        // The default grace: with it, an interrupt waits for the TERM round to settle before it sends KILL.
        env: { HOME: scratch.path },
      });
      try {
        // The first calls may restart the launcher once (the init's dump is not byte for byte the fast path's).
        await env.execute("true");
        await env.execute(LAUNCHER_PID);
        const launcher = Number((await env.execute(LAUNCHER_PID)).output);
        const helper = Number((await env.execute(HELPER_PID)).output);
        const file = `${scratch.path}/setsid.pid`;
        const controller = new AbortController();
        const thawLauncher = thawOnce(freeze(launcher));
        let thawHelper = (): void => undefined;
        try {
          const running = env.execute(command(file), { signal: controller.signal });
          // Pauses for ordering only: the helper forwards the run to the frozen launcher, then hears of the kill
          // (well within the 2 s after which it takes a silent launcher as stuck).
          await pause(200);
          controller.abort();
          await pause(300);
          thawHelper = thawOnce(freeze(helper));
          thawLauncher();
          await eventually(
            () => readFileSync(file, { encoding: "utf8", flag: "a+" }).trim() !== "",
            "the job's pid file",
          );
          thawHelper();
          const result = await running;
          expect(result.interrupted).toBe(true);
          const pid = Number(readFileSync(file, "utf8"));
          await eventually(() => !alive(pid), "the call's process to be gone", 3000).catch(() => undefined);
          if (alive(pid)) process.kill(pid, "SIGKILL");
          expect(alive(pid), `the call's process ${pid} is still alive`).toBe(false);
        } finally {
          thawHelper();
          thawLauncher();
        }
      } finally {
        await env.close();
      }
    });
  },
);

function thawOnce(frozen: Frozen): () => void {
  let thawed = false;
  return () => {
    if (!thawed) frozen.thaw();
    thawed = true;
  };
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
