/**
 * The helper's PTY mode (`swmux -p`, native/pty.c) driven directly: the
 * program has a terminal, a resize through the control FIFO reaches it, C-c
 * reaches its foreground job, and TERM to the helper ends the program's whole
 * session. The tools' tests drive the same mode through a backend.
 */

import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { localHelperPath } from "../../src/backends/shared/fast-path/helper-path.js";
import { noLocalHelper, skipAllUnless } from "../helpers/native-helper.js";
import { alive, eventually } from "../helpers/processes.js";
import { childrenOf } from "../helpers/proc-scan.js";

const helper = localHelperPath();
const started: ChildProcessWithoutNullStreams[] = [];
const dirs: string[] = [];

interface Pty {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  exited: Promise<number | null>;
  ctl: string;
  dir: string;
}

function startPty(argv: string[], size: [number, number] = [80, 24]): Pty {
  const dir = mkdtempSync(join(tmpdir(), "sw-pty-"));
  dirs.push(dir);
  const ctl = join(dir, "ctl");
  spawnSync("mkfifo", ["-m", "600", ctl]);
  const child = spawn(helper!, ["-p", "-c", ctl, "-g", "500", String(size[0]), String(size[1]), "--", ...argv], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, PS1: "$ ", TERM: "xterm-256color" },
  });
  started.push(child);
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exited, ctl, dir };
}

const waitForOutput = (pty: Pty, pattern: RegExp, what: string) => eventually(() => pattern.test(pty.output()), what);

afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.pid) process.kill(child.pid, "SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("swmux -p", () => {
  skipAllUnless(noLocalHelper);

  it("gives the program a terminal on stdin, stdout and stderr, of the size asked for", async () => {
    const pty = startPty(
      ["bash", "--norc", "-c", "test -t 0 && test -t 1 && test -t 2 && echo TTY-OK; stty size"],
      [91, 17],
    );
    expect(await pty.exited).toBe(0);
    expect(pty.output()).toContain("TTY-OK");
    expect(pty.output()).toContain("17 91");
  });

  it("passes the program's exit status on", async () => {
    const pty = startPty(["bash", "--norc", "-c", "exit 7"]);
    expect(await pty.exited).toBe(7);
  });

  it("resizes the terminal through the control FIFO: stty size sees it", async () => {
    const pty = startPty(["bash", "--norc", "-i"]);
    await waitForOutput(pty, /\$ $/, "the prompt");
    writeFileSync(pty.ctl, "101 33\n");
    // The resize is applied when the helper reads the FIFO, before the next stdin bytes are relayed or not:
    // the command is sent until it reports the new size.
    pty.child.stdin.write("stty size\r");
    await eventually(async () => {
      if (/33 101/.test(pty.output())) return true;
      pty.child.stdin.write("stty size\r");
      await new Promise((resolve) => setTimeout(resolve, 100));
      return false;
    }, "stty size printing 33 101");
    pty.child.stdin.write("exit\r");
    expect(await pty.exited).toBe(0);
  });

  it("delivers C-c to the foreground job: sleep ends, the shell goes on", async () => {
    const pty = startPty(["bash", "--norc", "-i"]);
    await waitForOutput(pty, /\$ $/, "the prompt");
    pty.child.stdin.write("echo SH=$$; sleep 987654\r");
    await waitForOutput(pty, /SH=(\d+)/, "the shell's pid");
    const shell = Number(/SH=(\d+)/.exec(pty.output())![1]);
    let sleeper = 0;
    await eventually(() => (sleeper = childrenOf(shell)[0] ?? 0) > 0, "the sleep to start");
    pty.child.stdin.write("\x03");
    await eventually(() => !alive(sleeper), "the sleep to end on C-c");
    pty.child.stdin.write("echo alive\r");
    await waitForOutput(pty, /[\r\n]alive\r\n/, "echo alive after C-c");
    expect(alive(shell)).toBe(true);
    pty.child.stdin.write("exit 3\r");
    expect(await pty.exited).toBe(3);
  });

  it("TERM to the helper ends every process of the program's session, also one ignoring HUP and TERM", async () => {
    const pty = startPty([
      "bash",
      "--norc",
      "-c",
      'trap "" HUP TERM; sleep 987656 & echo BG=$!; echo SH=$$; sleep 987657; echo never',
    ]);
    await waitForOutput(pty, /SH=(\d+)/, "the pids");
    const sleeper = Number(/BG=(\d+)/.exec(pty.output())![1]);
    const shell = Number(/SH=(\d+)/.exec(pty.output())![1]);
    expect(alive(sleeper) && alive(shell)).toBe(true);
    pty.child.kill("SIGTERM");
    await pty.exited;
    await eventually(() => !alive(sleeper) && !alive(shell), "the session's processes to end");
  });

  it("ends what the program left in its session when it exits by itself, also a job immune to the hangup", async () => {
    // The kernel's hangup at the leader's exit would end a plain job; an ignored HUP is inherited by the sleep.
    const pty = startPty(["bash", "--norc", "-c", 'trap "" HUP; sleep 987658 & echo BG=$!']);
    expect(await pty.exited).toBe(0);
    const sleeper = Number(/BG=(\d+)/.exec(pty.output())![1]);
    await eventually(() => !alive(sleeper), "the left-behind sleep to end");
  });

  it("refuses a bad size with its usage", async () => {
    const pty = startPty(["true"], [0, 24]);
    expect(await pty.exited).toBe(2);
    expect(pty.output()).toContain("usage: swmux -p");
  });
});
