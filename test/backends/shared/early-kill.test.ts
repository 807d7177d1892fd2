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

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../../../src/index.js";
import { compatBackends } from "../../compat/backends.js";
import { eventually } from "../../helpers/processes.js";

/** The entries with a kill path of their own (the others reuse one of these inside). */
const KILL_PATHS = new Set([
  "local",
  "local-plain",
  "local-sandbox",
  "local-sandbox-plain",
  "ssh",
  "ssh-plain",
  "docker",
  "docker-plain",
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
