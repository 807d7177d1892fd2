/**
 * An ssh session in a process that holds nothing else (test/fixtures/quiet-owner.mjs): the command's exit
 * line and its last output reach the client apart, so a step that reads a call's output to its end must keep
 * the process alive until it ends (src/backends/ssh/call.ts). It once let go at the exit line: every close()
 * of a script exited Node with 13 before the session was closed.
 */

import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { sshTestConfig, sshTestEnabled } from "./ssh-env.js";

const owner = new URL("../../fixtures/quiet-owner.mjs", import.meta.url).pathname;

describe.skipIf(!sshTestEnabled)("ssh: an owner that holds nothing else", () => {
  it("runs, checkpoints, rolls back and closes, then exits 0 by itself", () => {
    for (const fastPath of [true, false]) {
      const config = { ...sshTestConfig(), fastPath };
      const run = spawnSync(process.execPath, [owner, JSON.stringify(config)], { encoding: "utf8", timeout: 90_000 });
      expect({ fastPath, code: run.status, stdout: run.stdout }, run.stderr).toEqual({
        fastPath,
        code: 0,
        stdout: "ran 42\ncheckpoint\nrollback\nclosed\n",
      });
    }
  }, 200_000);
});
