/**
 * A command that starts with `-` is a command, on both paths: `--json` is
 * "command not found" (127) as in a terminal, not an option of the `eval`
 * that runs it (issue 24.5). src/core/script.ts, fast-script.ts and the background
 * processes' wrapper (src/tools/process/process-scripts.ts) eval it.
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../src/index.js";
import { callTool } from "../../src/tools/registry.js";
import { HELPER_PID } from "../helpers/fast-path-pids.js";
import { noLocalHelper, skipUnless } from "../helpers/native-helper.js";

for (const fastPath of [false, true]) {
  describe(`a command starting with a dash, ${fastPath ? "fast" : "plain"} path`, () => {
    let dir: string;
    let session: Environment;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "sw-dash-"));
      session = await createEnvironment({ backend: "local", cwd: dir, fastPath });
    });
    afterAll(async () => {
      await session?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("runs as a command: --json is not found (127), -- is not an option either", async (context) => {
      if (fastPath) skipUnless(context, noLocalHelper);
      const json = await session.execute("--json");
      expect(json.exitCode).toBe(127);
      expect(json.output).toMatch(/--json: command not found\n$/);
      expect(json.output).not.toContain("invalid option");
      const dashes = await session.execute("-- echo hi");
      expect(dashes.exitCode).toBe(127);
      expect(dashes.output).toMatch(/--: command not found\n$/);
      // A background process too (src/tools/process/process-scripts.ts evals it).
      const started = await callTool("terminal", { command: "--json", background: true }, { session });
      const done = await callTool("process", { action: "wait", session_id: started.session_id }, { session });
      expect(done).toMatchObject({
        exit_code: 127,
        output: expect.stringMatching(/--json: command not found\n$/) as unknown,
      });
      if (fastPath) {
        // The fast path really ran: the session's calls are children of its helper.
        const parent = (await session.execute(HELPER_PID)).output.trim();
        expect(readFileSync(`/proc/${parent}/comm`, "utf8")).toMatch(/^swmux/);
      }
    });
  });
}
