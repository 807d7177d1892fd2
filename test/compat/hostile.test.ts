/**
 * The self-harm and channel cases of the fast-path issue, on local, docker
 * and ssh, each on the fast and the plain path: a command that stops or
 * kills its own shell, stops its launcher or the helper (`$PPID` on the fast
 * path), or writes into every descriptor of its parent. Each may ruin its own
 * call, never the session: the call ends within its timeout plus the kill
 * grace, and the next call runs with the committed state. One session per
 * backend takes every case in turn, so a case that wedged it fails the next.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../../src/index.js";
import { compatBackends } from "./backends.js";

const NAMES = new Set(["local", "local-plain", "docker", "docker-plain", "ssh", "ssh-plain"]);
const TIMEOUT_MS = 2000;

/**
 * Sets `$p` to the call's parent: the launcher on the fast path (the job's parent), the wrapper shell on the
 * plain path. A statement of the call's own shell: inside `$(…)` `$BASHPID` would be that subshell's.
 */
const PARENT_PID = "read -r _ _ _ p _ < /proc/$BASHPID/stat";

for (const backend of compatBackends.filter((b) => NAMES.has(b.name))) {
  describe.skipIf(!backend.enabled)(`hostile commands: ${backend.name}`, () => {
    let env: Environment;
    let round = 0;

    beforeAll(async () => {
      env = await backend.create({ killGraceMs: 500 });
      expect(await env.execute("export KEEP=1; cd /tmp")).toMatchObject({ exitCode: 0 });
    });
    afterAll(async () => {
      await env.close();
    });

    /** The call after a hostile one: it runs, with the state committed before, plus one change of its own. */
    async function expectSessionIntact(): Promise<void> {
      round++;
      const next = await env.execute(`echo $KEEP; pwd; export ROUND=${round}`);
      expect(next).toMatchObject({ exitCode: 0, output: "1\n/tmp\n", timedOut: false });
      expect(await env.execute("echo $ROUND")).toMatchObject({ exitCode: 0, output: `${round}\n` });
    }

    it.each([
      ["kill $$", 143],
      ["kill -9 $$", 137],
    ])("`%s; echo survived` aborts the command (%i), and the session goes on", async (kill, status) => {
      const r = await env.execute(`${kill}; echo survived`, { timeoutMs: 20_000 });
      expect(r.exitCode).toBe(status);
      expect(r.output).not.toContain("survived");
      await expectSessionIntact();
    });

    it.each([
      ["stops its own shell", "kill -STOP $$; echo after"],
      ["suspends itself", "suspend -f; echo after"],
      ["stops its parent", `${PARENT_PID}; kill -STOP $p; echo after`],
      ["stops $PPID", "kill -STOP $PPID; echo after"],
    ])("%s: the call ends within its timeout and the kill grace, the session goes on", async (_name, command) => {
      const r = await env.execute(command, { timeoutMs: TIMEOUT_MS });
      // Stopped and killed at the timeout (124), or continued by the helper and finished (0).
      expect([0, 124]).toContain(r.exitCode);
      if (r.exitCode === 0) expect(r.output).toBe("after\n");
      await expectSessionIntact();
    });

    it("writes into every descriptor of its parent and of $PPID: at most its own call is ruined", async () => {
      const r = await env.execute(
        `${PARENT_PID}; for f in /proc/$p/fd/* /proc/$PPID/fd/*; do printf 'Z\\x00\\xff' > $f; done 2>/dev/null; echo done`,
        { timeoutMs: 10_000 },
      );
      expect(r.timedOut).toBe(false);
      await expectSessionIntact();
    });

    it("makes the kill marks read-only: later calls print nothing about them", async () => {
      expect(await env.execute("readonly SHELLWRIGHT_CALL SHELLWRIGHT_SESSION")).toMatchObject({ exitCode: 0 });
      const next = await env.execute("echo clean");
      expect(next).toMatchObject({ exitCode: 0, output: "clean\n" });
      await expectSessionIntact();
    });
  });
}
