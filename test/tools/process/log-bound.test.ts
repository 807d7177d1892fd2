/**
 * A background process's log is bounded inside the backend (log-bound.ts): a
 * producer that prints 20 MB (8 through a PTY) leaves at most maxLogBytes in its directory at
 * every look, the head and the tail of its output are kept, log and poll show
 * the end and say that bytes were dropped, a PTY's follower crosses the
 * segments to the end marker, and the session's own calls keep committing
 * their state meanwhile: on every compat backend, fast and plain path.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processRegistry, type Environment } from "../../../src/index.js";
import { callTool } from "../../../src/tools/registry.js";
import { toolSettings } from "../../../src/tools/shared/tool-settings.js";
import type { ToolResult } from "../../../src/tools/shared/tool-definition.js";
import { compatBackends } from "../../compat/backends.js";
import { noStaticHelper } from "../../helpers/native-helper.js";

const MAX_LOG_BYTES = 1024 * 1024;
const settings = toolSettings({ processes: { maxLogBytes: MAX_LOG_BYTES } });
/** `megabytes` MB of 37-byte lines, then the end marker. */
const producer = (megabytes: number): string =>
  `yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c ${megabytes}000000; echo; echo LOG-END-MARK`;

for (const backend of compatBackends) {
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
    });

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
    );
  });
}
