/**
 * Pseudo-terminal processes through the tools (terminal pty=true, process
 * write/submit/keys/screen/resize/wait-with-pattern) on every compat backend
 * (local, docker, ssh, the gateway and the stand-ins), each through the fast
 * path and the plain path: a REPL kept alive and
 * typed into, C-c into a running sleep, a hidden password prompt, a program
 * asking the cursor position, resize, and kill/close leaving no process.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../../../src/index.js";
import { callTool } from "../../../src/tools/registry.js";
import { processRegistry } from "../../../src/tools/process/process-registry.js";
import { DEFAULT_PROCESS_SETTINGS, toolSettings } from "../../../src/tools/shared/tool-settings.js";
import { blockDangerousCommands } from "../../../src/tools/terminal/approval.js";
import type { ToolResult } from "../../../src/tools/shared/tool-definition.js";
import { compatBackends } from "../../compat/backends.js";
import { forToolTests } from "../fixture.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";
import { aliveScript } from "../../helpers/processes.js";

/** A session secret (from a secret-looking variable) and a GitHub token's shape, both masked by the tools. */
const WRAPPED_SECRET = "Qz7pW3xK9mLr2Vt8Ns4Yb6Hd";
const KEY_SHAPED = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

/** Prints the pids of `parent`'s children, from /proc (pgrep is not in every image). */
const childrenScript = (parent: number): string =>
  `for f in /proc/[0-9]*/stat; do read -r l < "$f" 2>/dev/null || continue; set -- \${l##*) }; [[ $2 == ${parent} ]] && { p=\${f#/proc/}; echo \${p%/stat}; }; done; true`;

for (const backend of forToolTests(compatBackends)) {
  describe.skipIf(!backend.enabled)(`pty processes: ${backend.name}`, () => {
    skipAllUnless(noStaticHelper);
    let session: Environment;
    let scratch: string;

    const call = (tool: string, args: Record<string, unknown>): Promise<ToolResult> =>
      callTool(tool, args, { session });
    const proc = (id: string, action: string, extra: Record<string, unknown> = {}): Promise<ToolResult> =>
      call("process", { action, session_id: id, ...extra });
    const start = async (command: string, extra: Record<string, unknown> = {}): Promise<string> => {
      const r = await call("terminal", { command, background: true, pty: true, ...extra });
      expect(r, JSON.stringify(r)).toMatchObject({ status: "running", pty: true });
      return r.session_id as string;
    };
    /** Waits for `pattern` in what arrives after the previous action; fails with what did arrive. */
    const expectOutput = async (id: string, pattern: string): Promise<string> => {
      const r = await proc(id, "wait", { pattern, timeout: 30 });
      expect(r.status, `waiting for ${pattern}: ${JSON.stringify(r)}`).toBe("matched");
      return r.output as string;
    };

    beforeAll(async () => {
      // A secret-looking variable: its value is one of the session's secrets, masked in what the tools show.
      session = await backend.create({ env: { PTY_TEST_TOKEN: WRAPPED_SECRET } });
      scratch = (await session.execute("mktemp -d")).output.trim();
    });
    afterAll(async () => {
      await session?.execute(`rm -rf ${scratch}`);
      await session?.close();
    });

    it("has a terminal on stdin and stdout, with the session's cwd, variables and functions", async () => {
      await session.execute(`cd ${scratch} && export PTY_VAR=from-snapshot && ptyfn() { echo fn-works; }`);
      const id = await start(
        'test -t 0 && test -t 1 && echo TTY=yes; echo "VAR=$PTY_VAR"; pwd; ptyfn; stty size; read -r line; echo "got $line"',
        { cols: 91, rows: 17 },
      );
      const output = await expectOutput(id, "17 91");
      expect(output).toContain("TTY=yes");
      expect(output).toContain("VAR=from-snapshot");
      expect(output).toContain(scratch);
      expect(output).toContain("fn-works");
      await proc(id, "submit", { data: "hello" });
      expect(await expectOutput(id, "got hello")).not.toContain("\r");
      const end = await proc(id, "wait", { timeout: 30 });
      expect(end).toMatchObject({ status: "exited", exit_code: 0 });
    });

    it("keeps python3 alive between calls: the prompt, 6*7 gives 42, no escape sequences", async (context) => {
      if (!(await session.execute("command -v python3")).output.trim()) context.skip("no python3 in the backend");
      const id = await start("python3 -q");
      expect(await expectOutput(id, "^>>> $")).not.toContain("\x1b");
      await proc(id, "submit", { data: "6*7" });
      const output = await expectOutput(id, "^42\\n");
      expect(output).not.toContain("\x1b");
      await proc(id, "submit", { data: "print('again')" });
      await expectOutput(id, "^again\\n");
      await proc(id, "keys", { keys: ["C-d"] });
      expect(await proc(id, "wait", { timeout: 30 })).toMatchObject({ status: "exited", exit_code: 0 });
    });

    it("C-c ends a running sleep under bash -i; the shell answers after it and no sleep is left", async () => {
      const id = await start("PS1='$ ' exec bash --norc -i");
      await expectOutput(id, "\\$ $");
      await proc(id, "submit", { data: "echo SH=$$; sleep 987654" });
      const shell = Number(/SH=(\d+)/.exec(await expectOutput(id, "SH=\\d+"))![1]);
      let sleepers: number[] = [];
      for (let i = 0; i < 200 && sleepers.length === 0; i++) {
        const listed = await session.execute(childrenScript(shell));
        sleepers = listed.output
          .split("\n")
          .filter((line) => /^\d+$/.test(line))
          .map(Number);
      }
      expect(sleepers).toHaveLength(1);
      await proc(id, "keys", { keys: ["C-c"] });
      await proc(id, "submit", { data: "echo alive" });
      await expectOutput(id, "^alive$");
      expect((await session.execute(aliveScript(sleepers))).output).toBe("");
      await proc(id, "submit", { data: "exit 4" });
      expect(await proc(id, "wait", { timeout: 30 })).toMatchObject({ status: "exited", exit_code: 4 });
    });

    it("a dangerous line typed into an interactive bash meets the approval hook, by submit and by keys", async (context) => {
      if (!session.actsOnHost)
        context.skip("the approval hook is consulted only where a command acts on a real machine");
      const guarded = toolSettings({ approve: blockDangerousCommands() });
      const target = `${scratch}/typed-keep`;
      await session.execute(`mkdir -p ${target}`);
      const typed = (action: string, extra: Record<string, unknown>) =>
        callTool("process", { action, session_id: id, ...extra }, { session, settings: guarded });
      const id = await start("PS1='$ ' exec bash --norc -i");
      await expectOutput(id, "\\$ $");
      expect((await typed("submit", { data: `rm -rf ${target}` })).error).toMatch(
        /^Input not sent: .*recursive delete/,
      );
      expect((await typed("keys", { keys: ["rm -rf ", target, "Enter"] })).error).toMatch(/recursive delete/);
      // Typed in pieces: the piece that ends the line is refused, with what came before it.
      expect(await typed("write", { data: "rm -r" })).toMatchObject({ status: "ok" });
      expect((await typed("keys", { keys: [`f ${target}`, "Enter"] })).error).toMatch(/recursive delete/);
      // C-u erases the line at the prompt; what is typed next is a new line.
      expect(await typed("keys", { keys: ["C-u", "echo typed-fine", "Enter"] })).toMatchObject({ status: "ok" });
      await expectOutput(id, "^typed-fine");
      expect((await session.execute(`test -d ${target} && echo kept`)).output).toBe("kept\n");
      await proc(id, "kill");
    });

    it("a hidden password prompt is answered with submit; the secret never reaches the screen", async () => {
      const id = await start("read -rsp 'Password: ' pw; echo; echo \"length ${#pw}\"");
      await expectOutput(id, "Password: $");
      await proc(id, "submit", { data: "hunter2-secret" });
      const output = await expectOutput(id, "length 14");
      expect(output).not.toContain("hunter2");
      const screen = await proc(id, "screen");
      expect(screen.screen).toContain("length 14");
      expect(screen.screen).not.toContain("hunter2");
    });

    it("a program asking the cursor position (ESC[6n) gets the emulator's answer and goes on", async () => {
      const id = await start("printf 'abc\\e[6n'; read -rs -t 20 -d R pos; echo; echo \"pos=${pos#*[}\"");
      // Row 1, column 4: after "abc" on the first line.
      await expectOutput(id, "pos=1;4");
      expect(await proc(id, "wait", { timeout: 30 })).toMatchObject({ status: "exited", exit_code: 0 });
    });

    it("screen shows text where a program put it, and the cursor", async () => {
      const id = await start("printf '\\e[2J\\e[6;11HHERE\\e[3;5H'; read -r");
      await expectOutput(id, "HERE");
      const shot = await proc(id, "screen");
      expect(shot).toMatchObject({ cols: 80, rows: 24, cursor: { row: 2, col: 4 } });
      const lines = (shot.screen as string).split("\n");
      expect(lines).toHaveLength(24);
      expect(lines[5]).toBe(`${" ".repeat(10)}HERE`);
      await proc(id, "kill");
    });

    it("a secret that wraps over the rows of a 20-column terminal is masked on the screen, every row of it", async () => {
      // 44 and 28 characters: each line wraps over two or three rows, and no row holds a whole secret.
      const id = await start(`echo "key=${KEY_SHAPED}"; echo "val=$PTY_TEST_TOKEN"; echo DONE; exec cat`, {
        cols: 20,
        rows: 10,
      });
      await expectOutput(id, "DONE");
      const screen = (await proc(id, "screen")).screen as string;
      expect(screen.split("\n").slice(0, 6)).toEqual([
        "key=[REDACTED]",
        "[REDACTED]",
        "[REDACTED]",
        "val=[REDACTED]",
        "[REDACTED]",
        "DONE",
      ]);
      for (const secret of [KEY_SHAPED, WRAPPED_SECRET])
        for (let i = 0; i + 4 <= secret.length; i++) expect(screen).not.toContain(secret.slice(i, i + 4));
      await proc(id, "kill");
    });

    it("a curses program draws at row 5, column 10 and screen shows it there; a key ends it", async (context) => {
      if ((await session.execute("python3 -c 'import curses'")).exitCode !== 0) context.skip("no python3 curses");
      const program = [
        "import curses",
        "def main(w):",
        "    w.addstr(5, 10, 'CURSES-HERE')",
        "    w.refresh()",
        "    w.getch()",
        "curses.wrapper(main)",
        "print('curses-done')",
      ].join("\n");
      await session.execute(`cat > ${scratch}/draw.py`, { stdin: program });
      const id = await start(`python3 ${scratch}/draw.py`);
      await expectOutput(id, "CURSES-HERE");
      const lines = ((await proc(id, "screen")).screen as string).split("\n");
      expect(lines[5]).toBe(`${" ".repeat(10)}CURSES-HERE`);
      await proc(id, "keys", { keys: ["q"] });
      expect(await expectOutput(id, "curses-done")).not.toContain("\x1b");
      expect(await proc(id, "wait", { timeout: 30 })).toMatchObject({ status: "exited", exit_code: 0 });
    });

    it("vim -u NONE -i NONE: i, text, Escape, :wq, Enter writes the file", async (context) => {
      // vim, or the docker test image's vim-tiny (scripts/test-env/docker.sh).
      const vim = (await session.execute("command -v vim || command -v vim.tiny")).output.trim();
      if (!vim) context.skip("no vim in the backend");
      const file = `${scratch}/vim-written.txt`;
      // -i NONE: no viminfo. Where HOME is read-only (the local sandbox) vim's E138 about it
      // stops at "Press ENTER" after :wq and vim never exits.
      const id = await start(`${vim} -u NONE -i NONE -N ${file}`);
      await expectOutput(id, "vim-written");
      await proc(id, "keys", { keys: ["i", "typed in vim", "Escape", ":wq", "Enter"] });
      expect(await proc(id, "wait", { timeout: 30 })).toMatchObject({ status: "exited", exit_code: 0 });
      expect((await session.execute(`cat ${file}`)).output).toBe("typed in vim\n");
    });

    it("resize reaches the program: stty size prints the new size", async () => {
      const id = await start("PS1='$ ' exec bash --norc -i");
      await expectOutput(id, "\\$ $");
      expect(await proc(id, "resize", { cols: 101, rows: 33 })).toMatchObject({ status: "ok" });
      await proc(id, "submit", { data: "stty size" });
      await expectOutput(id, "^33 101");
      expect((await proc(id, "screen")).cols).toBe(101);
      await proc(id, "kill");
    });

    it("kill ends the program's whole session, also a HUP- and TERM-immune job", async () => {
      const id = await start('trap "" HUP TERM; sleep 987655 & echo "PIDS $$ $!"; wait');
      const [, shell, sleeper] = /PIDS (\d+) (\d+)/.exec(await expectOutput(id, "PIDS \\d+ \\d+"))!;
      const pids = [Number(shell), Number(sleeper)];
      expect((await session.execute(aliveScript(pids))).output).toContain("alive");
      expect(await proc(id, "kill")).toMatchObject({ status: "killed" });
      expect((await session.execute(aliveScript(pids))).output).toBe("");
    });

    it("kill ends also what left the PTY's session with setsid (found by the process's mark, checked by pid)", async () => {
      const id = await start("setsid sh -c 'echo \"SETSID-PID $$\"; exec sleep 987654' & echo started; wait");
      const [, escaped] = /SETSID-PID (\d+)/.exec(await expectOutput(id, "SETSID-PID \\d+"))!;
      const pids = [Number(escaped)];
      // It really left: a session of its own, not the PTY's.
      const stat = (await session.execute(`cat /proc/${escaped}/stat`)).output;
      expect(stat.split(") ")[1]!.split(" ")[3]).toBe(escaped);
      expect((await session.execute(aliveScript(pids))).output).toContain("alive");
      expect(await proc(id, "kill")).toMatchObject({ status: "killed" });
      expect((await session.execute(aliveScript(pids))).output).toBe("");
    });

    it("kill of a PTY program that already ended ends the setsid daemon it left running", async () => {
      // The daemon leaves the PTY's session, so the helper's end-of-session sweep does not reach it.
      // The program ends only once the daemon has its own session (field 6 of its stat).
      const id = await start(
        "setsid sh -c 'exec sleep 987653' </dev/null >/dev/null 2>&1 & d=$!; " +
          'until [ "$(cut -d" " -f6 /proc/$d/stat)" = "$d" ]; do sleep 0.05; done; echo "DAEMON $d"',
      );
      const [, daemon] = /DAEMON (\d+)/.exec(await expectOutput(id, "DAEMON \\d+"))!;
      expect(await proc(id, "wait", { timeout: 30 })).toMatchObject({ status: "exited", exit_code: 0 });
      const pids = [Number(daemon)];
      expect((await session.execute(aliveScript(pids))).output).toContain("alive");
      const killed = await proc(id, "kill");
      expect(killed).toMatchObject({ status: "already_exited", exit_code: 0 });
      expect(killed.note).toMatch(/processes it left running were killed/);
      expect((await session.execute(aliveScript(pids))).output).toBe("");
    });

    it("a foreground pty call has a terminal of the size asked for, and its output reads with \\n", async () => {
      const r = await call("terminal", {
        command: "test -t 1 && echo IS-TTY; stty size",
        pty: true,
        cols: 77,
        rows: 11,
      });
      expect(r).toMatchObject({ exit_code: 0 });
      expect(r.output).toContain("IS-TTY\n11 77");
    });

    it("cols and rows are refused without pty", async () => {
      expect((await call("terminal", { command: "true", cols: 80 })).error).toMatch(/cols is only for pty=true/);
    });

    // Checked from a second session by pid: not where each session has its own pid namespace.
    it.skipIf(backend.ownPidNamespace === true)(
      "close() of the session ends every PTY process, also a HUP- and TERM-immune job",
      async () => {
        const other = await backend.create();
        try {
          const started = await callTool(
            "terminal",
            { command: 'trap "" HUP TERM; sleep 987656 & echo "PIDS $$ $!"; wait', background: true, pty: true },
            { session: other },
          );
          const id = started.session_id as string;
          const seen = await callTool(
            "process",
            { action: "wait", session_id: id, pattern: "PIDS \\d+ \\d+", timeout: 30 },
            { session: other },
          );
          const [, shell, sleeper] = /PIDS (\d+) (\d+)/.exec(seen.output as string)!;
          const pids = [Number(shell), Number(sleeper)];
          expect((await session.execute(aliveScript(pids))).output).toContain("alive");
          await other.close();
          expect((await session.execute(aliveScript(pids))).output).toBe("");
        } finally {
          await other.close();
        }
      },
    );

    // Checked from a second session by pid, as above. Several PTYs that outlive HUP and TERM, ended by the one
    // sweep close() runs for them all; how long many of them take is bench/pty-close.mjs's (40 each).
    it.skipIf(backend.ownPidNamespace === true)(
      "close() ends every PTY process at once, each ignoring HUP and TERM",
      async () => {
        const count = 3;
        const other = await backend.create();
        try {
          const registry = processRegistry(other, { ...DEFAULT_PROCESS_SETTINGS, maxProcesses: count + 8 });
          const started = [];
          for (let i = 0; i < count; i++) {
            // No markAction: the PID line may be in before spawn() returns (pty-early-output.test.ts), and the
            // wait below must see the output since the start, not since an action nothing did.
            const p = await registry.spawn(`trap "" HUP TERM; echo "PID $$"; exec sleep 98766${i % 10}`, {
              pty: { cols: 80, rows: 24 },
            });
            started.push(p);
          }
          const pids: number[] = [];
          for (const p of started) {
            const seen = await registry.waitFor(p, /PID \d+/, 90_000);
            expect(seen.status, seen.output).toBe("matched");
            pids.push(Number(/PID (\d+)/.exec(seen.output)![1]));
          }
          expect((await session.execute(aliveScript(pids))).output.split("\n").filter(Boolean)).toHaveLength(count);
          await other.close();
          expect((await session.execute(aliveScript(pids))).output).toBe("");
        } finally {
          await other.close();
        }
      },
      180_000,
    );
  });
}

describe("pty without the helper", () => {
  it("says which helper is missing and how to build it, on the plain path too", async () => {
    const saved = process.env.SHELLWRIGHT_HELPER_DIR;
    // A missing directory stands for a machine without a C compiler (helper-path.ts).
    process.env.SHELLWRIGHT_HELPER_DIR = "/nonexistent/shellwright-helper-dir";
    const local = compatBackends.find((b) => b.name === "local")!;
    const session = await local.create();
    try {
      for (const background of [true, false]) {
        const r = await callTool("terminal", { command: "true", pty: true, background }, { session });
        expect(r.error, JSON.stringify(r)).toMatch(
          /pty=true needs the static helper native\/build\/swmux-<arch>-static .*uname -m: \w+.*npm run build/,
        );
      }
    } finally {
      if (saved === undefined) delete process.env.SHELLWRIGHT_HELPER_DIR;
      else process.env.SHELLWRIGHT_HELPER_DIR = saved;
      await session.close();
    }
  });
});
