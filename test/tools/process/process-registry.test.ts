/**
 * The library side of background processes: processRegistry(session).spawn's
 * onOutput listener streams the output as it arrives, for a plain background
 * process and for a PTY one, without taking it away from poll and log; and a
 * pending wait is woken by the end of its process (an exit, a kill), never by
 * a check that comes later, on every backend.
 */

import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createEnvironment, processRegistry, type Environment } from "../../../src/index.js";
import { DEFAULT_PROCESS_SETTINGS } from "../../../src/tools/shared/tool-settings.js";
import { compatBackends } from "../../compat/backends.js";
import { forToolTests } from "../fixture.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";
import { useSession } from "../../helpers/session.js";

describe("processRegistry onOutput", () => {
  const local = useSession(() => createEnvironment({ backend: "local" }));

  it("streams a background process's output to the listener, and poll still has all of it", async () => {
    const registry = processRegistry(local.session);
    let streamed = "";
    const process = await registry.spawn('echo one; read -r line; echo "two $line"', {
      onOutput: (text) => (streamed += text),
    });
    // The first line arrives while the process still waits for its input.
    await vi.waitFor(() => expect(streamed).toBe("one\n"), { timeout: 10_000, interval: 20 });
    await registry.write(process, "x\n");
    expect(await registry.wait(process, 30_000)).toBe(true);
    await vi.waitFor(() => expect(streamed).toBe("one\ntwo x\n"), { timeout: 10_000, interval: 20 });
    expect(process.output).toBe("one\ntwo x\n");
  });

  describe("pty", () => {
    skipAllUnless(noStaticHelper);
    it("streams a PTY process's output, as the program wrote it, beside the screen", async () => {
      const registry = processRegistry(local.session);
      let streamed = "";
      const process = await registry.spawn("printf 'PTY-\\033[1mBOLD\\033[0m\\n'; read -r line", {
        pty: { cols: 80, rows: 24 },
        onOutput: (text) => (streamed += text),
      });
      await vi.waitFor(() => expect(streamed).toContain("PTY-\x1b[1mBOLD\x1b[0m"), { timeout: 10_000, interval: 20 });
      expect((await registry.screen(process)).screen).toContain("PTY-BOLD");
      await registry.kill(process);
    });
  });
});

// The checks inside the backend come every 10 minutes here, far beyond the
// test's timeout: a wait that returns was woken by the end itself.
const CHECK_EVERY_MS = 600_000;

for (const backend of forToolTests(compatBackends)) {
  describe.skipIf(!backend.enabled)(`a pending wait is woken by its process's end: ${backend.name}`, () => {
    let session: Environment;
    beforeAll(async () => {
      session = await backend.create();
    });
    afterAll(async () => {
      await session?.close();
    });
    const registry = () => processRegistry(session, { ...DEFAULT_PROCESS_SETTINGS, watchIntervalMs: CHECK_EVERY_MS });

    it("the process exits by itself: the wait returns with its exit code", async () => {
      const process = await registry().spawn("read -r line; exit 3");
      const waiting = registry().wait(process, 3_600_000);
      await registry().write(process, "go\n");
      expect(await waiting).toBe(true);
      expect(process).toMatchObject({ status: "exited", exitCode: 3 });
    });

    it("the command ends, leaving a job that holds its output open: the wait returns all the same", async () => {
      const process = await registry().spawn("read -r line; sleep 600 & echo left-running; exit 4");
      const waiting = registry().wait(process, 3_600_000);
      await registry().write(process, "go\n");
      expect(await waiting).toBe(true);
      expect(process).toMatchObject({ status: "exited", exitCode: 4, output: "left-running\n" });
      // The job and the log's bounder, which its open output kept alive: all ended, so a second reap finds nothing.
      expect(await registry().reap(process)).toBeGreaterThanOrEqual(1);
      expect(await registry().reap(process)).toBe(0);
    });

    it("kill ends the process: every pending wait returns, the process killed", async () => {
      const process = await registry().spawn("trap '' TERM; exec sleep 1000");
      const waits = [registry().wait(process, 3_600_000), registry().wait(process, 3_600_000)];
      await registry().kill(process);
      expect(await Promise.all(waits)).toEqual([true, true]);
      expect(process.status).toBe("killed");
    });
  });
}
