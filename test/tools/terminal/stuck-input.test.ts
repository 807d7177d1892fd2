/**
 * A foreground `terminal` command whose program waits for keys on a terminal
 * nobody types into (src/tools/terminal/stuck-input.ts):
 * `git commit` once the session unset GIT_EDITOR, EDITOR and VISUAL (git's
 * default vi) and `script -qc python3` (a REPL under a terminal the command
 * made itself) come back before their timeout with the advice, and the
 * program is gone. Not cut, each held until the tool has probed it twice: a
 * foreground sleep, a program reading a pipe whose writer is outside the
 * call, a slow producer, a terminal-waiting leftover of an earlier call, a
 * PTY process started while the commands run, and a terminal program the
 * command itself left waiting in the background while its foreground sleeps. Local (fast and plain), docker (fast and plain), ssh.
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
import { eventually } from "../../helpers/processes.js";

/** A short quiet time: each case here probes several times within a few seconds. */
const settings = toolSettings({ stuckInputMs: 1000 });
/** Far beyond what a stopped command takes: a result before it is not a timeout. */
const TIMEOUT_S = 120;

const terminal = (session: Environment, command: string): Promise<ToolResult> =>
  callTool("terminal", { command, timeout: TIMEOUT_S }, { session, settings });

/** The session, whose stuck-input probes (isolated calls) are counted by the call they look for. */
function countingProbes(session: Environment): { session: Environment; probes: Map<string, number> } {
  const probes = new Map<string, number>();
  const execute: Environment["execute"] = async (command, options) => {
    const result = await session.execute(command, options);
    const mark = options?.isolated ? /^tag=SHELLWRIGHT_CALL=(\S+)$/m.exec(command)?.[1] : undefined;
    if (mark !== undefined) probes.set(mark, (probes.get(mark) ?? 0) + 1);
    return result;
  };
  const proxy = new Proxy(session, {
    get: (target, key) => {
      if (key === "execute") return execute;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { session: proxy, probes };
}

/** The pid the advice names, once it has been checked gone (or another process) in the session. */
async function expectStopped(session: Environment, result: ToolResult, name: RegExp): Promise<void> {
  expect(result.exit_code).not.toBe(124);
  expect(result.output).toMatch(new RegExp(`${STUCK_NOTICE.replace(/[[\]]/g, "\\$&")}$`));
  expect(result.error).toMatch(/waiting for input on a terminal/);
  expect(result.error).toMatch(/background=true, pty=true/);
  expect(result.error).toMatch(/git commit -m/);
  const [, stuckName, pid] = /^`(.+)` \(pid (\d+)\)/.exec(String(result.error)) ?? [];
  expect(stuckName).toMatch(name);
  // Gone: no such pid, or a zombie, or a newcomer under another name.
  const left = await session.execute(`s=$(cat /proc/${pid}/stat 2>/dev/null) && [[ $s != *") Z "* ]] && echo "$s"`);
  expect(left.output.includes(`(${stuckName})`), left.output).toBe(false);
}

/**
 * The probe is one bash script over /proc on every backend; these are the shapes in which it runs differently
 * (local and remote, fast and plain path, in a container), kept few for the suite's time.
 */
const NAMES = new Set(["local", "local-plain", "docker", "docker-plain", "ssh"]);

for (const backend of compatBackends.filter((b) => NAMES.has(b.name))) {
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
          await expectStopped(session, commit, /^(vi|vim.*|editor)$/);
          const repl = await terminal(session, "script -qc python3 /dev/null");
          await expectStopped(session, repl, /^python3/);
          await session.execute(`cd / && rm -rf ${repo}`);
        } finally {
          await session.close();
        }
      }, 240_000);

      it("a foreground sleep, a program reading a pipe, a slow producer, leftovers and PTY processes are not cut", async () => {
        const session = await backend.create({ timeoutMs: 60_000 });
        const watched = countingProbes(session);
        try {
          const dir = (await session.execute("mktemp -d")).output.trim();
          const [go, pipe, input] = ["go", "pipe", "input"].map((name) => `${dir}/${name}`);
          await session.execute(`mkfifo ${pipe} ${input}`);
          // Each command waits for \`go\`, made once the tool has probed it twice (two probes are what a stop
          // takes), so a misjudged one is cut however slow the machine; sleeps in a loop are a foreground sleep.
          const held = `until [ -e ${go} ]; do sleep 0.2; done`;
          // A terminal program left waiting by an earlier call (its stdin never ends): not this call's.
          await session.execute(`script -qc cat /dev/null <>${input} >/dev/null 2>&1 &`);
          // The pipe's writer is an earlier call's job, so nothing of the reading call is busy: only what its
          // stdin is (a pipe, not a terminal) tells the reader from a stuck program.
          await session.execute(`(exec 3>${pipe}; ${held}; echo given >&3) >/dev/null 2>&1 &`);
          const calls = [
            `${held}; echo slept`,
            `head -n 1 < ${pipe}`,
            `(${held}; echo produced) | cat`,
            // A terminal program this call left waiting in the background while its foreground sleeps.
            `script -qc cat /dev/null <>${input} >/dev/null 2>&1 & ${held}; echo beside`,
          ].map((command) => terminal(watched.session, command));
          let settled = 0;
          calls.forEach((call) => void call.finally(() => settled++));
          // A PTY process started while the commands are quiet waits for keys by design.
          const pty = await processRegistry(session).spawn("cat", { pty: { cols: 80, rows: 24 } });
          await eventually(
            () =>
              settled > 0 ||
              (watched.probes.size === calls.length && [...watched.probes.values()].every((n) => n >= 2)),
            "two probes of each command",
            120_000,
          );
          await session.execute(`touch ${go}`);
          expect(await Promise.all(calls)).toEqual(
            ["slept", "given", "produced", "beside"].map((line) => ({ output: `${line}\n`, exit_code: 0 })),
          );
          await processRegistry(session).kill(pty);
          await session.execute(`rm -rf ${dir}`);
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
