/**
 * Codex's exec_command / write_stdin pair (src/tools/unified-exec/) on local,
 * docker and ssh, each fast and plain: a command that ends within the yield,
 * a REPL kept alive and typed into, Ctrl-C into a running program, a pipe
 * instead of a terminal, the output budget, and what it refuses.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../../../src/index.js";
import { callTool } from "../../../src/tools/registry.js";
import type { ToolResult } from "../../../src/tools/shared/tool-definition.js";
import { execCommandTool, writeStdinTool } from "../../../src/tools/unified-exec/unified-exec.js";
import { toolSettings } from "../../../src/tools/shared/tool-settings.js";
import { blockDangerousCommands } from "../../../src/tools/terminal/approval.js";
import { compatBackends } from "../../compat/backends.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";

const NAMES = new Set(["local", "local-plain", "docker", "docker-plain", "ssh", "ssh-plain"]);

for (const backend of compatBackends.filter((b) => NAMES.has(b.name))) {
  describe.skipIf(!backend.enabled)(`exec_command and write_stdin: ${backend.name}`, () => {
    skipAllUnless(noStaticHelper);
    let session: Environment;

    const exec = (args: Record<string, unknown>, settings?: Parameters<typeof callTool>[2]["settings"]) =>
      callTool(execCommandTool, args, { session, ...(settings ? { settings } : {}) });
    const write = (args: Record<string, unknown>): Promise<ToolResult> => callTool(writeStdinTool, args, { session });
    /** Writes, then reads until `pattern` shows in what came back (each reply holds only what is new). */
    const writeUntil = async (id: string, chars: string, pattern: RegExp): Promise<ToolResult & { seen: string }> => {
      let seen = "";
      let reply = await write({ session_id: id, chars, yield_time_ms: 500 });
      for (let i = 0; i < 60; i++) {
        seen += String(reply.output ?? "");
        if (pattern.test(seen) || reply.session_id === undefined) break;
        reply = await write({ session_id: id, chars: "", yield_time_ms: 500 });
      }
      return { ...reply, seen };
    };

    beforeAll(async () => {
      session = await backend.create();
      await session.execute("cd /tmp && export UX_VAR=from-state");
    });
    afterAll(async () => {
      await session?.close();
    });

    it("returns a command that ends within the yield with its exit code, no session_id, from the session's state", async () => {
      const r = await exec({ cmd: 'test -t 1 && echo tty; echo "$UX_VAR $PWD"; exit 3', tty: true });
      expect(r).toMatchObject({ output: "tty\nfrom-state /tmp\n", exit_code: 3 });
      expect(r.session_id).toBeUndefined();
      expect(typeof r.wall_time).toBe("number");
    });

    it("runs with plain pipes by default (tty false), as Codex's exec_command does", async () => {
      const r = await exec({ cmd: "test -t 0 || echo stdin-pipe; test -t 1 || echo stdout-pipe" });
      expect(r).toMatchObject({ output: "stdin-pipe\nstdout-pipe\n", exit_code: 0 });
    });

    it("keeps a REPL alive: write_stdin types into it and returns only what is new", async () => {
      const started = await exec({ cmd: "python3 -q", tty: true, yield_time_ms: 500 });
      expect(started.exit_code).toBeUndefined();
      const id = started.session_id as string;
      expect(id).toMatch(/^proc_/);
      // Typed before the prompt, the line would be echoed twice (by the terminal, then by the REPL).
      if (!/>>> $/.test(String(started.output))) await writeUntil(id, "", />>> $/);
      const answer = await writeUntil(id, "6*7\r", /42/);
      expect(answer.seen).toMatch(/^6\*7\n42\n/m);
      expect(answer.seen).not.toContain("\x1b");
      const next = await writeUntil(id, "print('again')\r", /again\n>>> $/);
      // Only what came after the previous reply: the earlier answer is not repeated.
      expect(next.seen).not.toContain("42");
      const ended = await writeUntil(id, "\x04", /$^/);
      expect(ended).toMatchObject({ exit_code: 0 });
      expect(ended.session_id).toBeUndefined();
    });

    it("ends a running program with Ctrl-C typed as a control character", async () => {
      const started = await exec({ cmd: "echo started; sleep 987654", tty: true, yield_time_ms: 300 });
      const id = started.session_id as string;
      expect(id).toBeDefined();
      const ended = await writeUntil(id, "\x03", /$^/);
      expect(ended.exit_code).toBe(130);
    });

    it("without a terminal, Ctrl-C is SIGINT to the command: a sleep ends with 130, a trap sees it", async () => {
      const sleeper = await exec({ cmd: "echo READY; exec sleep 987652", tty: false, yield_time_ms: 250 });
      expect(sleeper).toMatchObject({ output: "READY\n" });
      expect(await writeUntil(sleeper.session_id as string, "\x03", /$^/)).toMatchObject({ exit_code: 130 });
      // A trap runs, and the command goes on reading its stdin after it: the pipe stays open.
      const trapped = await exec({
        cmd: "trap 'echo got-INT' INT; echo READY; while read -r line; do echo \"read $line\"; done; echo eof; exit 5",
        tty: false,
        yield_time_ms: 250,
      });
      const id = trapped.session_id as string;
      expect((await writeUntil(id, "\x03", /got-INT/)).seen).toContain("got-INT");
      expect((await writeUntil(id, "after\n", /read after/)).seen).toContain("read after");
      expect(await writeUntil(id, "\x04", /$^/)).toMatchObject({ exit_code: 5 });
    });

    it("once its end was reported, a session_id is unknown to write_stdin, with Codex's words", async () => {
      const quick = await exec({ cmd: "echo done", yield_time_ms: 5000 });
      expect(quick).toMatchObject({ exit_code: 0 });
      const running = await exec({ cmd: 'read -r line; echo "got $line"', yield_time_ms: 250 });
      const id = running.session_id as string;
      const ended = await writeUntil(id, "x\n", /$^/);
      expect(ended).toMatchObject({ exit_code: 0 });
      expect(ended.seen).toContain("got x");
      for (const chars of ["", "more\n"]) {
        expect(await write({ session_id: id, chars })).toEqual({
          error: `write_stdin failed: Unknown process id ${id}`,
        });
      }
    });

    it("checks each line typed into a command with the approval hook, on a pipe and on a terminal", async (context) => {
      if (!session.actsOnHost)
        context.skip("the approval hook is consulted only where a command acts on a real machine");
      const dir = (await session.execute("mktemp -d")).output.trim();
      const guarded = toolSettings({ approve: blockDangerousCommands() });
      const write = (args: Record<string, unknown>) => callTool(writeStdinTool, args, { session, settings: guarded });
      try {
        for (const tty of [false, true]) {
          const shell = await exec({ cmd: "exec bash --norc", tty, yield_time_ms: 250 }, guarded);
          const id = shell.session_id as string;
          const enter = tty ? "\r" : "\n";
          // Whole, and in two writes whose second only ends the line.
          const whole = await write({ session_id: id, chars: `rm -rf ${dir}${enter}` });
          expect(whole.error).toMatch(/^Input not sent: Command denied: .*recursive delete/);
          expect((await write({ session_id: id, chars: "rm -rf " })).error).toBeUndefined();
          expect((await write({ session_id: id, chars: `${dir}${enter}` })).error).toMatch(/recursive delete/);
          if (tty) {
            // ^U erases the pending line on a terminal; then a harmless line goes through.
            const echoed = await writeUntil(id, `\x15echo fine-tty${enter}`, /fine-tty/);
            expect(echoed.error, JSON.stringify(echoed)).toBeUndefined();
            await write({ session_id: id, chars: `exit${enter}` });
          } else {
            // A pipe cannot take back "rm -rf ": whatever line comes next runs after it, and is checked so.
            expect((await write({ session_id: id, chars: `echo later${enter}` })).error).toMatch(/recursive delete/);
            await write({ session_id: id, chars: "\x03" });
          }
          expect((await session.execute(`test -d ${dir} && echo kept`)).output).toBe("kept\n");
        }
      } finally {
        await session.execute(`rm -rf ${dir}`);
      }
    });

    it("runs without a terminal when tty is false: a pipe, written to line by line", async () => {
      const started = await exec({ cmd: "test -t 0 || echo piped; cat", tty: false, yield_time_ms: 300 });
      const id = started.session_id as string;
      expect(String(started.output)).toContain("piped");
      const echoed = await writeUntil(id, "abc\n", /abc/);
      expect(echoed.seen).toBe("abc\n");
      // Ctrl-D alone closes a pipe's stdin: cat reads the end and exits.
      expect(await writeUntil(id, "\x04", /$^/)).toMatchObject({ exit_code: 0 });
    });

    it("cuts output beyond max_output_tokens from the middle and says how much there was", async () => {
      const r = await exec({ cmd: "seq 1 5000", tty: false, max_output_tokens: 20 });
      expect(r.exit_code).toBe(0);
      const output = String(r.output);
      expect(output.startsWith("1\n2\n")).toBe(true);
      expect(output.endsWith("4999\n5000\n")).toBe(true);
      expect(output).toMatch(/characters cut/);
      expect(r.original_token_count).toBeGreaterThan(5000);
    });

    it("refuses an unknown session_id, an empty command and a command the approval hook blocks", async () => {
      expect((await write({ session_id: "proc_nosuch", chars: "x" })).error).toBe(
        "write_stdin failed: Unknown process id proc_nosuch",
      );
      expect((await exec({ cmd: "  " })).error).toMatch(/the command is empty/);
      if (session.actsOnHost) {
        const blocked = await exec({ cmd: "echo never" }, toolSettings({ approve: () => "not here" }));
        expect(blocked).toEqual({ error: "not here" });
      }
    });
  });
}
