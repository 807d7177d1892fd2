/**
 * A PTY on the fast path, local, docker (the helper in the container over
 * `docker exec -i`) and ssh (on the host, over one channel of the master): a keystroke and its echo start no process in the backend
 * (no run request reaches the helper) and no call holds one of its slots;
 * when the helper dies under the PTY, the follower goes on from the byte the
 * channel stopped at, and the next keystroke takes the `execute` route.
 */

import { describe, expect, it } from "vitest";
import type { Session } from "../../../src/core/session.js";
import type { FastPathRunner } from "../../../src/backends/shared/fast-path/fast-path-runner.js";
import { callTool } from "../../../src/tools/registry.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";
import { eventually } from "../../helpers/processes.js";
import { TRANSPORT_ENABLED, transportSessions } from "../../helpers/transport-session.js";

const openSession = transportSessions();
const backends = (["local", "docker", "ssh"] as const).map((name) => ({ name, enabled: TRANSPORT_ENABLED[name] }));

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`a PTY through the session's helper: ${backend.name}`, () => {
    skipAllUnless(noStaticHelper);

    async function ptyCat(): Promise<{ session: Session; runner: FastPathRunner; id: string }> {
      const { transport, session } = await openSession(backend.name);
      // The helper first (ssh copies it in the background), so that the PTY is one of its processes.
      expect(await session.whenFastPathReady()).toBe(true);
      const runner = transport.fastPathRunner!;
      const started = await callTool("terminal", { command: "cat", background: true, pty: true }, { session });
      const id = started.session_id as string;
      expect(id).toBeTruthy();
      return { session, runner, id };
    }

    const echo = async (session: Session, id: string, word: string): Promise<string> => {
      await callTool("process", { action: "submit", session_id: id, data: word }, { session });
      const seen = await callTool(
        "process",
        { action: "wait", session_id: id, pattern: word, timeout: 30 },
        { session },
      );
      expect(seen.status, JSON.stringify(seen)).toBe("matched");
      return seen.output as string;
    };

    it("a keystroke and its echo start no process in the backend, and no call holds a slot", async () => {
      const { session, runner, id } = await ptyCat();
      // The first keystroke may come before the process's stdin is open (then it takes the execute route).
      await echo(session, id, "warm");
      const sent = runner.requestsSent;
      for (const word of ["alpha", "beta", "gamma"]) await echo(session, id, word);
      expect(runner.requestsSent).toBe(sent);
      expect(runner.openCalls).toBe(0);
      await callTool("process", { action: "kill", session_id: id }, { session });
    });

    it("when the helper dies under the PTY, its output goes on from where it stopped, and keystrokes still arrive", async () => {
      const { session, runner, id } = await ptyCat();
      await echo(session, id, "before");
      runner.killHelper();
      await eventually(() => !runner.running || runner.helperExits > 0, "the helper gone");
      await echo(session, id, "after");
      const screen = await callTool("process", { action: "screen", session_id: id }, { session });
      // cat's echo and its copy, once each: nothing streamed twice by the follower that took over.
      expect((screen.screen as string).match(/before/g)).toHaveLength(2);
      expect((screen.screen as string).match(/after/g)).toHaveLength(2);
      await callTool("process", { action: "kill", session_id: id }, { session });
    });
  });
}
