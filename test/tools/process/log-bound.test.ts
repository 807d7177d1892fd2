/**
 * A background process's log is bounded inside the backend (log-bound.ts): a
 * producer that prints 20 MB (8 through a PTY) leaves at most maxLogBytes in its directory at
 * every look, the head and the tail of its output are kept, log and poll show
 * the end and say that bytes were dropped, a PTY's follower crosses the
 * segments to the end marker, and the session's own calls keep committing
 * their state meanwhile: on every compat backend, fast and plain path.
 */

import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { processRegistry, type Environment } from "../../../src/index.js";
import { callTool } from "../../../src/tools/registry.js";
import { toolSettings } from "../../../src/tools/shared/tool-settings.js";
import type { ToolResult } from "../../../src/tools/shared/tool-definition.js";
import { compatBackends } from "../../compat/backends.js";
import { forToolTests } from "../fixture.js";
import { noStaticHelper } from "../../helpers/native-helper.js";

const MAX_LOG_BYTES = 1024 * 1024;
const settings = toolSettings({ processes: { maxLogBytes: MAX_LOG_BYTES } });
/**
 * The live processes of the given process groups, `group comm` a line (run from a second session): a
 * wrapper's group holds the bounder too, and its bash is a fork that no mark in /proc names.
 */
const groupScan = (groups: number[]): string =>
  [
    `for f in /proc/[0-9]*/stat; do { builtin read -r l < "$f"; } 2>/dev/null || continue; c=\${l#*(}; c=\${c%)*}`,
    `  set -- \${l##*) }; [[ $1 != Z && " ${groups.join(" ")} " == *" $3 "* ]] && echo "$3 $c"`,
    "done; true",
  ].join("\n");
/** About 2 MB/s of 100 kB lines, forever. */
const CHATTY = "while :; do head -c 100000 /dev/zero | tr '\\0' x; echo; sleep 0.05; done";

/** `megabytes` MB of 37-byte lines, then the end marker. */
const producer = (megabytes: number): string =>
  `yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c ${megabytes}000000; echo; echo LOG-END-MARK`;

for (const backend of forToolTests(compatBackends)) {
  describe.skipIf(!backend.enabled)(`bounded process logs: ${backend.name}`, () => {
    let session: Environment;
    const call = (tool: string, args: Record<string, unknown>): Promise<ToolResult> =>
      callTool(tool, args, { session, settings });
    /** Bytes of the process's log files inside the backend. */
    const dirBytes = async (id: string): Promise<number> => {
      const dir = processRegistry(session).get(id)!.files.dir;
      const r = await session.execute(`cat ${dir}/log ${dir}/log.* 2>/dev/null | wc -c`, { isolated: true });
      return Number(r.output.trim());
    };

    beforeAll(async () => {
      session = await backend.create();
    });
    afterAll(async () => {
      await session?.close();
    });

    it("20 MB printed: the log stays within maxLogBytes, keeps its head and tail, and calls commit their state", async () => {
      const started = await call("terminal", { command: producer(20), background: true });
      const id = started.session_id as string;
      const sizes: number[] = [];
      for (let i = 0; i < 6; i++) {
        // The session's own calls run beside the flood and keep their state.
        await call("terminal", { command: `cd /tmp && export LOG_BOUND_VAR=kept-${i}` });
        sizes.push(await dirBytes(id));
      }
      const ended = await call("process", { action: "wait", session_id: id, timeout: 300 });
      expect(ended, JSON.stringify(ended).slice(0, 300)).toMatchObject({ status: "exited", exit_code: 0 });
      sizes.push(await dirBytes(id));
      expect(Math.max(...sizes), `sizes seen: ${sizes.join(", ")}`).toBeLessThanOrEqual(MAX_LOG_BYTES + 4096);
      expect(ended.output).toMatch(/LOG-END-MARK\n$/);

      const log = await call("process", { action: "log", session_id: id, limit: 2 });
      expect(log.output).toMatch(/^[0-9a-z]+\nLOG-END-MARK$/);
      expect(log.log_note).toMatch(/^The first \d+ characters are no longer kept/);
      const dir = processRegistry(session).get(id)!.files.dir;
      expect((await session.execute(`head -c 37 ${dir}/log`)).output).toBe("0123456789abcdefghijklmnopqrstuvwxyz\n");
      expect((await call("terminal", { command: 'echo "$LOG_BOUND_VAR $PWD"' })).output).toBe("kept-5 /tmp\n");
    }, 180_000);

    it.skipIf(noStaticHelper !== undefined)(
      "a PTY's follower reads past every dropped segment to the end",
      async () => {
        const started = await call("terminal", { command: producer(8), background: true, pty: true });
        const id = started.session_id as string;
        const seen = await call("process", { action: "wait", session_id: id, pattern: "^LOG-END-MARK$", timeout: 300 });
        expect(seen.status, JSON.stringify(seen).slice(0, 300)).toBe("matched");
        expect(await dirBytes(id)).toBeLessThanOrEqual(MAX_LOG_BYTES + 4096);
        const screen = await call("process", { action: "screen", session_id: id });
        expect(screen.screen).toContain("LOG-END-MARK");
      },
      180_000,
    );

    // Checked from a second session by pid: not where each session has its own pid namespace.
    it.skipIf(backend.ownPidNamespace === true)(
      "a job left running keeps writing past the bound: the wait returns, and close() leaves no bounder behind",
      async () => {
        const own = await backend.create();
        const checker = session;
        try {
          // The checks inside the backend come every 10 minutes and the wait may take an hour: a wait that
          // returns was woken by the process's end, which nothing of the bounder may hold back.
          const bounded = {
            session: own,
            settings: toolSettings({ processes: { maxLogBytes: 65_536, watchIntervalMs: 600_000 } }),
          };
          const chatty = await callTool("terminal", { command: CHATTY, background: true }, bounded);
          const left = await callTool(
            "terminal",
            { command: `{ ${CHATTY}; } & echo left-running`, background: true },
            bounded,
          );
          const ids = [chatty.session_id as string, left.session_id as string];
          // The left job holds the output pipe: the process ended all the same, and its wait says so.
          const ended = await callTool("process", { action: "wait", session_id: ids[1], timeout: 3600 }, bounded);
          expect(ended, JSON.stringify(ended).slice(0, 300)).toMatchObject({ status: "exited", exit_code: 0 });
          const dirs = ids.map((id) => processRegistry(own).get(id)!.files.dir);
          // Both logs roll (past the head, into segments): each bounder is busy when the session closes.
          await vi.waitFor(
            async () =>
              expect((await checker.execute(`ls ${dirs.map((d) => `${d}/log.*`).join(" ")}`)).exitCode).toBe(0),
            { timeout: 60_000, interval: 200 },
          );
          const groups = ids.map((id) => processRegistry(own).get(id)!.pid);
          const before = (await checker.execute(groupScan(groups))).output;
          // The left process's wrapper is gone: its group still holds two shells, the job's loop and the bounder
          // (and for a moment, the forks either makes).
          expect(
            before.split("\n").filter((line) => line === `${groups[1]} bash`).length,
            before,
          ).toBeGreaterThanOrEqual(2);
          await own.close();
          await vi.waitFor(async () => expect((await checker.execute(groupScan(groups))).output).toBe(""), {
            timeout: 30_000,
            interval: 100,
          });
        } finally {
          await own.close();
        }
      },
      180_000,
    );
  });
}
