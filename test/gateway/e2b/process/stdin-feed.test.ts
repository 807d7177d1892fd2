/**
 * A process started with an open stdin and no PTY, through the real SDK on the local backend (fast and plain
 * path): its output arrives whole however fast it comes (a background process's bounded log once lost the
 * middle of a burst), its stdin still takes writes in order and an end of file, and neither it, its feeder nor
 * its FIFO outlives it.
 */

import { existsSync, readdirSync } from "node:fs";
import { dirname } from "node:path";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { Sandbox } from "e2b";
import { useE2bSandbox } from "../sandbox-fixture.js";
import { createEnvironment } from "../../../../src/index.js";
import { openStdinFeed } from "../../../../src/gateway/e2b/process/stdin-feed.js";
import { alive, eventually } from "../../../helpers/processes.js";

/** The FIFO directories of open stdins (stdin-feed.ts), in this machine's temp dir. */
const feedDirs = (): string[] => readdirSync(tmpdir()).filter((name) => name.startsWith("shellwright-e2b-stdin-"));

describe.each([true, false])("an open stdin with fastPath %s", (fastPath) => {
  const e2b = useE2bSandbox(fastPath);

  /** `cat` with an open stdin, once it has said its pid; the FIFO directory that is its alone. */
  async function startCat(script: string) {
    const before = new Set(feedDirs());
    let output = "";
    const handle = await e2b.sandbox.commands.run(script, {
      background: true,
      stdin: true,
      onStdout: (text: string) => {
        output += text;
      },
    });
    await eventually(() => output.includes("pid="), "the pid");
    const pid = Number(/pid=(\d+)/.exec(output)![1]);
    const dirs = feedDirs().filter((name) => !before.has(name));
    return { handle, pid, dirs, output: () => output };
  }

  it("delivers every byte of a burst of MBs on each stream", async () => {
    // 8 MB of zeros as base64: 10.8 MB on stdout, and 1 MB raw on stderr, as fast as the machine writes them.
    let stdout = 0;
    let stderr = 0;
    let stdoutText = "";
    const handle = await e2b.sandbox.commands.run(
      "head -c 8000000 /dev/zero | base64 -w 76; head -c 1000000 /dev/zero | tr '\\0' e >&2; echo end",
      {
        background: true,
        stdin: true,
        timeoutMs: 120_000,
        onStdout: (text) => {
          stdout += text.length;
          if (stdoutText.length < 200) stdoutText += text;
        },
        onStderr: (text) => {
          stderr += text.length;
        },
      },
    );
    const result = await handle.wait();
    expect(result.exitCode).toBe(0);
    const base64 = Math.ceil(8_000_000 / 3) * 4;
    const lines = Math.ceil(base64 / 76);
    expect(stdout).toBe(base64 + lines + "end\n".length);
    expect(stderr).toBe(1_000_000);
    expect(stdoutText.startsWith("AAAA")).toBe(true);
  });

  it("takes writes in order and an end of file, then leaves no feeder and no FIFO", async () => {
    const { handle, pid, dirs, output } = await startCat("echo pid=$BASHPID; cat; echo eof");
    // Removed as soon as the process has its stdin open: nothing of it can outlive the process.
    expect(dirs).toEqual([]);
    for (const word of ["one ", "two ", "ü€ "]) await e2b.sandbox.commands.sendStdin(handle.pid, word);
    await e2b.sandbox.commands.closeStdin(handle.pid);
    expect((await handle.wait()).exitCode).toBe(0);
    expect(output()).toBe(`pid=${pid}\none two ü€ eof\n`);
    expect(alive(pid)).toBe(false);
  });

  it("ends with a kill: the process, and the feeder that held its stdin open", async () => {
    const { handle, pid, dirs } = await startCat("echo pid=$BASHPID; cat");
    expect(dirs).toEqual([]);
    expect(await e2b.sandbox.commands.kill(handle.pid)).toBe(true);
    await expect(handle.wait()).rejects.toThrow();
    expect(alive(pid)).toBe(false);
    const write = await e2b.sandbox.commands.sendStdin(handle.pid, "late").catch((e: unknown) => e);
    expect(write).toBeInstanceOf(Error);
  });

  it("leaves no FIFO behind when its sandbox is killed while it runs", async () => {
    const before = new Set(feedDirs());
    const sandbox = await Sandbox.create(e2b.opts);
    let output = "";
    await sandbox.commands.run("echo pid=$BASHPID; cat", {
      background: true,
      stdin: true,
      onStdout: (text) => {
        output += text;
      },
    });
    await eventually(() => output.includes("pid="), "the pid");
    const pid = Number(/pid=(\d+)/.exec(output)![1]);
    await sandbox.kill();
    await eventually(() => !alive(pid), "the process to end with its sandbox");
    expect(feedDirs().filter((name) => !before.has(name))).toEqual([]);
  });
});

describe("a stdin feed whose process never opened it", () => {
  // Its directory was removed only by stop() or by the process's first line: a session closed first (a sandbox
  // killed before its process started) left it in the backend's temp dir.
  it("leaves no FIFO directory once its session closes", async () => {
    const session = await createEnvironment({ cwd: "/tmp" });
    const feed = await openStdinFeed(session);
    expect(existsSync(feed.path)).toBe(true);
    await session.close();
    expect(existsSync(dirname(feed.path))).toBe(false);
  });
});
