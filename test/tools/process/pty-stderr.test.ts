/**
 * The owner's stderr under a PTY flood (src/tools/process/pty-terminal.ts,
 * src/core/stderr.ts): random bytes make a terminal emulator report parse
 * errors, and a stdio MCP host may never read the owner's stderr. The
 * emulator must say nothing, and nothing the library writes may hold the
 * owner once its session is closed: it exits by itself, on every backend.
 */

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, openSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sshTestConfig, sshTestEnabled } from "../../backends/ssh/ssh-env.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";
import { unreadPipe } from "../../helpers/unread-pipe.js";

const owner = new URL("../../fixtures/pty-flood-owner.mjs", import.meta.url).pathname;

const backends = [
  { name: "local", enabled: true, config: () => ({ backend: "local" }) },
  {
    name: "docker",
    enabled: process.env.SHELLWRIGHT_TEST_DOCKER === "1",
    config: () => ({ backend: "docker", image: "shellwright-test:bookworm", network: false }),
  },
  { name: "ssh", enabled: sshTestEnabled, config: () => sshTestConfig() },
];

/** Runs the owner with `stderrFd` as its stderr; resolves with its exit code and stdout, or "hung". */
function runOwner(config: object, stderrFd: number, fill: boolean): Promise<{ code: number | string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [owner, JSON.stringify(config), fill ? "fill" : ""], {
      stdio: ["ignore", "pipe", stderrFd],
    });
    let stdout = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    // Only catches a hang: a well-behaved owner exits seconds after its close().
    const limit = setTimeout(() => {
      child.kill("SIGKILL");
      resolve({ code: "hung", stdout });
    }, 90_000);
    child.on("close", (code, signal) => {
      clearTimeout(limit);
      resolve({ code: code ?? signal ?? "unknown", stdout });
    });
  });
}

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`a PTY flood and the owner's stderr: ${backend.name}`, () => {
    skipAllUnless(noStaticHelper);

    it("100 KB of random bytes make the emulator print nothing to stderr", async () => {
      const dir = mkdtempSync(join(tmpdir(), "sw-pty-stderr-"));
      const file = join(dir, "stderr");
      const fd = openSync(file, "w");
      try {
        const run = await runOwner(backend.config(), fd, false);
        expect(run, readFileSync(file, "utf8").slice(0, 2000)).toMatchObject({ code: 0 });
        expect(JSON.parse(run.stdout)).toMatchObject({ status: "matched" });
        const stderr = readFileSync(file, "utf8");
        expect(stderr).not.toMatch(/xterm|Parsing error/);
        // The library's own warning still gets through where stderr is read.
        expect(stderr).toContain("shellwright: warning: a warning from the library's default sink\n");
      } finally {
        closeSync(fd);
        rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);

    it("with a full stderr pipe nobody reads, the owner still exits by itself after close()", async () => {
      const pipe = unreadPipe();
      try {
        const run = await runOwner(backend.config(), pipe.writeFd, true);
        expect(run.code).toBe(0);
        // Nothing was left queued in Node for a reader that never comes.
        expect(JSON.parse(run.stdout)).toEqual({ status: "matched", queued: 0 });
        expect(pipe.drain()).toMatch(/^\.+$/);
      } finally {
        pipe.close();
      }
    }, 120_000);
  });
}
