/**
 * A foreground `terminal` command whose program waits for keys on a terminal
 * nobody types into (src/tools/terminal/stuck-input.ts), on every backend:
 * `git commit` once the session unset GIT_EDITOR, EDITOR and VISUAL (git's
 * default vi) and `script -qc python3` (a REPL under a terminal the command
 * made itself) come back before their timeout with the advice, and the
 * program is gone. Not cut: a sleep, a read of the stdin the command gave
 * itself, a slow producer, a terminal-waiting leftover of an earlier call, a
 * PTY process started while the command runs, and a REPL the command itself
 * left waiting in the background while its foreground sleeps.
 */

import { describe, expect, it } from "vitest";
import type { Environment } from "../../../src/index.js";
import { processRegistry } from "../../../src/tools/process/process-registry.js";
import { callTool } from "../../../src/tools/registry.js";
import { toolSettings } from "../../../src/tools/shared/tool-settings.js";
import type { ToolResult } from "../../../src/tools/shared/tool-definition.js";
import { CallLineFilter, STUCK_NOTICE, withoutCallLine } from "../../../src/tools/terminal/stuck-input.js";
import { backendSelected, compatBackends } from "../../compat/backends.js";
import { sessionWithGit } from "../../helpers/git-session.js";

/** A short quiet time: each case here probes several times within a few seconds. */
const settings = toolSettings({ stuckInputMs: 1000 });
/** Far beyond what a stopped command takes: a result before it is not a timeout. */
const TIMEOUT_S = 120;

const terminal = (session: Environment, command: string): Promise<ToolResult> =>
  callTool("terminal", { command, timeout: TIMEOUT_S }, { session, settings });

/**
 * Backends whose own interrupt (or timeout) of `script -qc python3` leaves the REPL running, the stop here
 * included: the daytona stand-in's plain path (its tree kill misses the child of script's new session).
 */
const KILL_MISSES_PTY_CHILD = new Set(["daytona-plain"]);

/** The pid the advice names, once it has been checked gone (or another process) in the session. */
async function expectStopped(session: Environment, result: ToolResult, name: RegExp, backend: string): Promise<void> {
  expect(result.exit_code).not.toBe(124);
  expect(result.output).toMatch(new RegExp(`${STUCK_NOTICE.replace(/[[\]]/g, "\\$&")}$`));
  expect(result.error).toMatch(/waiting for input on a terminal/);
  expect(result.error).toMatch(/background=true, pty=true/);
  expect(result.error).toMatch(/git commit -m/);
  const [, stuckName, pid] = /^`(.+)` \(pid (\d+)\)/.exec(String(result.error)) ?? [];
  expect(stuckName).toMatch(name);
  if (KILL_MISSES_PTY_CHILD.has(backend) && stuckName!.startsWith("python")) return;
  // Gone: no such pid, or a zombie, or a newcomer under another name.
  const left = await session.execute(`s=$(cat /proc/${pid}/stat 2>/dev/null) && [[ $s != *") Z "* ]] && echo "$s"`);
  expect(left.output.includes(`(${stuckName})`), left.output).toBe(false);
}

for (const backend of compatBackends) {
  describe.skipIf(!backend.enabled || !backendSelected(backend.name))(
    `stuck on terminal input: ${backend.name}`,
    () => {
      it("git commit with git's own vi, and script -qc python3, return with the advice and leave no process", async () => {
        const session = await sessionWithGit(backend);
        try {
          const repo = (await session.execute("mktemp -d")).output.trim();
          await session.execute(
            `cd ${repo} && git init -q && git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m one`,
          );
          // As a model might: the stand-in editor is unset, and a terminal type that lets git start vi.
          await session.execute("unset GIT_EDITOR EDITOR VISUAL; export TERM=xterm");
          const commit = await terminal(session, "git -c user.name=t -c user.email=t@example.com commit --allow-empty");
          await expectStopped(session, commit, /^(vi|vim.*|editor)$/, backend.name);
          const repl = await terminal(session, "script -qc python3 /dev/null");
          await expectStopped(session, repl, /^python3/, backend.name);
          await session.execute(`cd / && rm -rf ${repo}`);
        } finally {
          await session.close();
        }
      }, 240_000);

      it("a sleep, a read of given stdin, a slow producer, leftovers and PTY processes are not cut", async () => {
        const session = await backend.create({ timeoutMs: 60_000 });
        try {
          // A REPL left waiting on its own terminal by an earlier call: not this call's.
          await session.execute("script -qc python3 /dev/null >/dev/null 2>&1 &");
          const sleep = terminal(session, "sleep 6; echo slept");
          // A PTY process started while the command is quiet waits for keys by design.
          await new Promise((resolve) => setTimeout(resolve, 1500));
          const pty = await processRegistry(session).spawn("python3 -q", { pty: { cols: 80, rows: 24 } });
          expect(await sleep).toEqual({ output: "slept\n", exit_code: 0 });
          expect(await terminal(session, "printf 'given\\n' | { sleep 5; read -r v; echo got $v; }")).toEqual({
            output: "got given\n",
            exit_code: 0,
          });
          expect(await terminal(session, "(sleep 5; echo produced) | cat")).toEqual({
            output: "produced\n",
            exit_code: 0,
          });
          await processRegistry(session).kill(pty);
        } finally {
          await session.close();
        }
      }, 240_000);
    },
  );
}

describe("the call's mark line", () => {
  const mark = "AbC_-123456z";
  it("is taken out of the stream, however the output is cut into chunks", () => {
    const filter = new CallLineFilter();
    const out = ["__sw_c", `all=${mark}`, "\nfirst", " line\nsecond\n"].map((chunk) => filter.push(chunk)).join("");
    expect(out + filter.finish()).toBe("first line\nsecond\n");
    expect(filter.mark).toBe(mark);
  });

  it("takes a shell's trace of it too, and leaves other output as it was", () => {
    expect(withoutCallLine(`+ echo __sw_call=${mark}\n__sw_call=${mark}\n+ ls\nx\n`)).toBe("+ ls\nx\n");
    // Without the line (an echo the session redefined), nothing is taken and no mark is known.
    const filter = new CallLineFilter();
    expect(filter.push("a\nb\n") + filter.push("c\nd") + filter.finish()).toBe("a\nb\nc\nd");
    expect(filter.mark).toBeUndefined();
    expect(withoutCallLine(`__sw_call=${mark}\n`)).toBe("");
    expect(withoutCallLine(`x __sw_call=${mark}\n`)).toBe(`x __sw_call=${mark}\n`);
  });
});
