/**
 * Background processes and the `process` tool, on every backend of the compat
 * suite: snapshot, workdir, real exit codes, tree kill, stdin, the rolling
 * buffer, limits, notifications, and the one-round-trip rule.
 */

import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Environment } from "../../../src/index.js";
import { drainCompletionEvents } from "../../../src/tools/process/process-registry.js";
import { callTool } from "../../../src/tools/registry.js";
import { toolSettings, type ToolSettingsInput } from "../../../src/tools/shared/tool-settings.js";
import { blockDangerousCommands } from "../../../src/tools/terminal/approval.js";
import type { ToolResult } from "../../../src/tools/shared/tool-definition.js";
import { compatBackends } from "../../compat/backends.js";
import { forToolTests } from "../fixture.js";
import { remoteStyleBackend } from "../remote-style.js";
import { aliveScript } from "../../helpers/processes.js";

for (const backend of forToolTests([...compatBackends, remoteStyleBackend])) {
  describe.skipIf(!backend.enabled)(`process tool: ${backend.name}`, () => {
    let session: Environment;
    let scratch: string;

    const call = (tool: string, args: unknown, settings?: ToolSettingsInput): Promise<ToolResult> =>
      callTool(tool, args, { session, ...(settings ? { settings: toolSettings(settings) } : {}) });
    const start = async (
      command: string,
      extra: Record<string, unknown> = {},
      settings?: ToolSettingsInput,
    ): Promise<string> => {
      const r = await call("terminal", { command, background: true, ...extra }, settings);
      expect(r).toMatchObject({ status: "running", session_id: expect.stringMatching(/^proc_[0-9a-f]{12}$/) });
      return r.session_id as string;
    };
    const wait = (id: string, timeout = 30): Promise<ToolResult> =>
      call("process", { action: "wait", session_id: id, timeout });

    beforeAll(async () => {
      session = await backend.create();
      scratch = (await session.execute("mktemp -d")).output.trim();
    });
    afterAll(async () => {
      await session.execute(`rm -rf ${scratch}`);
      await session.close();
    });

    it("runs through the session snapshot, in the requested workdir, and reports the real exit code", async () => {
      await session.execute(`export BG_VAR=from-snapshot; cd ${scratch}`);
      const id = await start("echo $BG_VAR; pwd; exit 7", { workdir: "/" });
      const r = await wait(id);
      expect(r).toMatchObject({ status: "exited", exit_code: 7, output: "from-snapshot\n/\n" });
      // A per-call workdir does not move the session.
      expect((await session.execute("pwd")).output).toBe(`${scratch}\n`);
    });

    it("polls and lists what it has, with the exit code once done", async () => {
      const id = await start("echo first; sleep 0.5; echo second");
      const early = await call("process", { action: "poll", session_id: id });
      expect(early).toMatchObject({ session_id: id, status: "running" });
      expect(early.exit_code).toBeUndefined();
      await wait(id);
      const late = await call("process", { action: "poll", session_id: id });
      expect(late).toMatchObject({ status: "exited", exit_code: 0, output_preview: "first\nsecond\n" });
      const list = await call("process", { action: "list" });
      expect((list.processes as ToolResult[]).find((p) => p.session_id === id)).toMatchObject({
        status: "exited",
        exit_code: 0,
      });
    });

    it("kills the real command's whole tree, not a wrapper", async () => {
      const id = await start(
        `sleep 300 & echo $! > ${scratch}/child.pid; (sleep 301 & echo $! > ${scratch}/grandchild.pid; wait) & echo $BASHPID > ${scratch}/self.pid; wait`,
      );
      await vi.waitFor(async () => expect((await session.execute(`cat ${scratch}/grandchild.pid`)).exitCode).toBe(0), {
        timeout: 10_000,
        interval: 50,
      });
      const pids = [`${scratch}/child.pid`, `${scratch}/grandchild.pid`, `${scratch}/self.pid`];
      expect((await session.execute(aliveScript(pids))).output.trim().split("\n")).toHaveLength(3);
      const killed = await call("process", { action: "kill", session_id: id });
      expect(killed).toMatchObject({ status: "killed", session_id: id, completion_reason: "killed" });
      await vi.waitFor(async () => expect((await session.execute(aliveScript(pids))).output).toBe(""), {
        timeout: 10_000,
        interval: 100,
      });
      expect(await call("process", { action: "kill", session_id: id })).toMatchObject({ status: "already_exited" });
    });

    it("kills also what left the group with setsid, found by the process's mark", async () => {
      const id = await start(
        `setsid sh -c 'echo $$ > ${scratch}/setsid.tmp && mv ${scratch}/setsid.tmp ${scratch}/setsid.pid; exec sleep 987653' & wait`,
      );
      await vi.waitFor(async () => expect((await session.execute(`cat ${scratch}/setsid.pid`)).exitCode).toBe(0), {
        timeout: 10_000,
        interval: 50,
      });
      const pids = [`${scratch}/setsid.pid`];
      expect((await session.execute(aliveScript(pids))).output).toMatch(/^alive \d+/);
      expect(await call("process", { action: "kill", session_id: id })).toMatchObject({ status: "killed" });
      expect((await session.execute(aliveScript(pids))).output).toBe("");
    });

    it("kills what an ended command left running, recognised by its marker", async () => {
      const id = await start(`echo $SHELLWRIGHT_BG_ID; sleep 300 & echo $! > ${scratch}/left.pid`);
      expect(await wait(id)).toMatchObject({ status: "exited", exit_code: 0, output: `${id}\n` });
      expect((await session.execute(aliveScript([`${scratch}/left.pid`]))).output).toMatch(/^alive \d+/);
      const r = await call("process", { action: "kill", session_id: id });
      expect(r).toMatchObject({
        status: "already_exited",
        exit_code: 0,
        note: "The command had ended; the processes it left running were killed.",
      });
      await vi.waitFor(
        async () => expect((await session.execute(aliveScript([`${scratch}/left.pid`]))).output).toBe(""),
        { timeout: 10_000, interval: 100 },
      );
      expect((await call("process", { action: "kill", session_id: id })).note).toBeUndefined();
    });

    it("kills a setsid daemon an ended command left running, found by its mark", async () => {
      const id = await start(
        `setsid sh -c 'echo $$ > ${scratch}/daemon.pid; exec sleep 300' </dev/null >/dev/null 2>&1 & ` +
          `until [ -s ${scratch}/daemon.pid ]; do sleep 0.05; done`,
      );
      expect(await wait(id)).toMatchObject({ status: "exited", exit_code: 0 });
      expect((await session.execute(aliveScript([`${scratch}/daemon.pid`]))).output).toMatch(/^alive \d+/);
      expect(await call("process", { action: "kill", session_id: id })).toMatchObject({
        status: "already_exited",
        note: "The command had ended; the processes it left running were killed.",
      });
      expect((await session.execute(aliveScript([`${scratch}/daemon.pid`]))).output).toBe("");
    });

    it("checks each line written to a process with the approval hook before sending it", async (context) => {
      if (!session.actsOnHost)
        context.skip("the approval hook is consulted only where a command acts on a real machine");
      const guarded = { approve: blockDangerousCommands() };
      const target = `${scratch}/keep-me`;
      await session.execute(`mkdir -p ${target}`);
      const id = await start("exec bash --norc", {}, guarded);
      const send = (action: string, data: string) => call("process", { action, session_id: id, data }, guarded);
      expect(await send("submit", `rm -rf ${target}`)).toMatchObject({
        status: "blocked",
        error: expect.stringMatching(/^Input not sent: Command denied: .*recursive delete/),
      });
      // Two lines in one write: the second is refused, so neither is sent.
      expect((await send("write", `echo first > ${scratch}/first\nrm -rf ${target}\n`)).status).toBe("blocked");
      expect(await send("submit", `echo ok > ${scratch}/ok`)).toMatchObject({ status: "ok" });
      await send("submit", "exit 0");
      expect(await wait(id)).toMatchObject({ status: "exited", exit_code: 0 });
      const left = await session.execute(`ls ${scratch}/keep-me ${scratch}/ok ${scratch}/first 2>&1; true`);
      expect(left.output).toContain(`${scratch}/ok`);
      expect(left.output).toMatch(/first.*No such file/);
      expect((await session.execute(`test -d ${target} && echo kept`)).output).toBe("kept\n");
    });

    it("records the exit code a command chooses when it is told to stop", async () => {
      const id = await start("trap 'echo stopping; exit 5' TERM; echo ready; while :; do sleep 0.1; done");
      await vi.waitFor(
        async () => expect((await call("process", { action: "poll", session_id: id })).output_preview).toBe("ready\n"),
        { timeout: 10_000 },
      );
      const killed = await call("process", { action: "kill", session_id: id });
      expect(killed).toMatchObject({ status: "killed", exit_code: 5 });
      expect((await call("process", { action: "log", session_id: id })).output).toContain("stopping");
    });

    it("keeps only the process's own output in the log of a killed process: no job report (issue 22.10)", async () => {
      const id = await start("cat");
      expect(await call("process", { action: "write", session_id: id, data: "Hello" })).toMatchObject({ status: "ok" });
      await vi.waitFor(
        async () => expect((await call("process", { action: "poll", session_id: id })).output_preview).toBe("Hello"),
        { timeout: 10_000 },
      );
      expect(await call("process", { action: "kill", session_id: id })).toMatchObject({ status: "killed" });
      expect((await call("process", { action: "log", session_id: id })).output).toBe("Hello");
    });

    it("writes, submits and closes stdin", async () => {
      const id = await start('while read -r line; do echo "got:$line"; done; echo eof');
      expect(await call("process", { action: "write", session_id: id, data: "par" })).toEqual({
        status: "ok",
        bytes_written: 3,
      });
      expect(await call("process", { action: "submit", session_id: id, data: "tial é" })).toEqual({
        status: "ok",
        bytes_written: 8,
      });
      expect(await call("process", { action: "close", session_id: id })).toMatchObject({ status: "ok" });
      expect(await wait(id)).toMatchObject({ status: "exited", exit_code: 0, output: "got:partial é\neof\n" });
      expect(await call("process", { action: "submit", session_id: id, data: "late" })).toMatchObject({
        error: expect.stringContaining("stdin not available"),
      });
    });

    it("keeps the tail of a long output in a bounded buffer and says so in log", async () => {
      const small = { processes: { bufferChars: 1000 } };
      const id = await start("seq 1 20000", {}, small);
      await call("process", { action: "wait", session_id: id }, small);
      const log = await call("process", { action: "log", session_id: id, limit: 3 }, small);
      expect(log.output).toBe("19998\n19999\n20000");
      expect(log.log_note).toMatch(/^The first \d+ characters are no longer kept in memory/);
      const all = await call("process", { action: "log", session_id: id, limit: 100_000 }, small);
      expect((all.output as string).length).toBeLessThanOrEqual(1000);
      expect(all.output).toMatch(/\n20000$/);
      const page = await call("process", { action: "log", session_id: id, offset: 1, limit: 2 }, small);
      expect(page).toMatchObject({ showing: "2 lines, from line 1" });
    });

    it("log's offset is a line number from 1, as read_file's: offset 1 is the first line", async () => {
      const id = await start("printf 'one\\ntwo\\nthree\\n'");
      await call("process", { action: "wait", session_id: id });
      const log = (offset: number | undefined, limit: number) =>
        call("process", { action: "log", session_id: id, limit, ...(offset === undefined ? {} : { offset }) });
      expect(await log(1, 2)).toMatchObject({ output: "one\ntwo", total_lines: 3, showing: "2 lines, from line 1" });
      expect(await log(3, 5)).toMatchObject({ output: "three", showing: "1 lines, from line 3" });
      expect(await log(4, 5)).toMatchObject({ output: "", showing: "0 lines" });
      expect(await log(undefined, 2)).toMatchObject({ output: "two\nthree", showing: "2 lines, from line 2" });
    });

    it("returns timeout from wait while the process runs, and the tail of its output", async () => {
      const id = await start("echo waiting; sleep 30");
      const r = await call("process", { action: "wait", session_id: id, timeout: 1 });
      expect(r).toMatchObject({
        status: "timeout",
        output: "waiting\n",
        timeout_note: "Waited 1s, process still running",
      });
      await call("process", { action: "kill", session_id: id });
    });

    it("clamps a wait above the foreground maximum and says so", async () => {
      const id = await start("true");
      const r = await callTool(
        "process",
        { action: "wait", session_id: id, timeout: 5000 },
        { session, settings: toolSettings({ maxForegroundTimeoutSeconds: 20 }) },
      );
      expect(r).toMatchObject({
        status: "exited",
        exit_code: 0,
        timeout_note: "Requested wait of 5000s was clamped to the limit of 20s",
      });
    });

    it("delivers a completion event for notify_on_complete, once", async () => {
      drainCompletionEvents(session);
      const id = await start("echo notified; exit 3", { notify_on_complete: true });
      await vi
        .waitFor(() => expect(drainCompletionEvents(session).map((e) => e.processId)).toContain(id), {
          timeout: 15_000,
          interval: 50,
        })
        .catch(async () => {
          throw new Error("no completion event");
        });
      expect(drainCompletionEvents(session)).toEqual([]);
    });

    it("puts the whole event in one message", async () => {
      drainCompletionEvents(session);
      const id = await start("echo notified; exit 3", { notify_on_complete: true });
      let events: ReturnType<typeof drainCompletionEvents> = [];
      await vi.waitFor(
        () => {
          events = drainCompletionEvents(session);
          expect(events).toHaveLength(1);
        },
        { timeout: 15_000, interval: 50 },
      );
      expect(events[0]).toMatchObject({
        processId: id,
        sessionId: id,
        status: "exited",
        exitCode: 3,
        output: "notified\n",
      });
      expect(events[0]!.message).toBe(
        `[IMPORTANT: Background process ${id} exited (exit code 3).\nCommand: echo notified; exit 3\nOutput:\nnotified\n]`,
      );
    });

    it("drops the event when the model already saw the end", async () => {
      drainCompletionEvents(session);
      const id = await start("exit 0", { notify_on_complete: true });
      expect(await wait(id)).toMatchObject({ status: "exited" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(drainCompletionEvents(session).filter((e) => e.processId === id)).toEqual([]);
    });

    it("costs one round trip per poll and per list, none once the end is known", async () => {
      const ids = [await start("sleep 30"), await start("sleep 30"), await start("sleep 30")];
      const spy = vi.spyOn(session, "execute");
      try {
        await call("process", { action: "poll", session_id: ids[0] });
        expect(spy).toHaveBeenCalledTimes(1);
        await call("process", { action: "list" });
        expect(spy).toHaveBeenCalledTimes(2);
        spy.mockClear();
        for (const id of ids) await call("process", { action: "kill", session_id: id });
        expect(spy).toHaveBeenCalledTimes(3);
        spy.mockClear();
        await call("process", { action: "poll", session_id: ids[0] });
        expect(spy).not.toHaveBeenCalled();
      } finally {
        spy.mockRestore();
      }
    });

    it("never undoes an export that runs while it waits", async () => {
      const id = await start("sleep 30");
      const waiting = call("process", { action: "wait", session_id: id, timeout: 1 });
      await session.execute("export EXPORTED_DURING_WAIT=1");
      expect(await waiting).toMatchObject({ status: "timeout" });
      expect((await session.execute("echo $EXPORTED_DURING_WAIT")).output).toBe("1\n");
      await call("process", { action: "kill", session_id: id });
    });

    it("answers bad calls with an error that says what to do", async () => {
      expect(await call("process", { action: "poll" })).toMatchObject({
        error: expect.stringContaining("session_id is required for poll"),
      });
      expect(await call("process", { action: "poll", session_id: "proc_000000000000" })).toMatchObject({
        status: "not_found",
      });
      expect(await call("process", { action: "explode" })).toMatchObject({
        error: expect.stringContaining("Invalid arguments for process"),
      });
      const id = await start("sleep 30");
      expect(await call("process", { action: "write", session_id: id })).toMatchObject({
        error: "data is required for write.",
      });
      await call("process", { action: "kill", session_id: id });
    });

    it("starts in a workdir that does not exist with an error, not a process", async () => {
      const r = await call("terminal", { command: "true", background: true, workdir: `${scratch}/missing` });
      expect(r).toMatchObject({ exit_code: -1, error: expect.stringContaining("Failed to start background process") });
    });
  });

  describe.skipIf(!backend.enabled)(`process limits and close: ${backend.name}`, () => {
    it("tracks at most maxProcesses, dropping finished ones first", async () => {
      const session = await backend.create();
      try {
        const settings = toolSettings({ processes: { maxProcesses: 2 } });
        const start = (command: string) => callTool("terminal", { command, background: true }, { session, settings });
        const done = await start("true");
        await callTool("process", { action: "wait", session_id: done.session_id }, { session, settings });
        const a = await start("sleep 30");
        const b = await start("sleep 30"); // the finished one makes room
        expect(b.status).toBe("running");
        const list = await callTool("process", { action: "list" }, { session, settings });
        expect((list.processes as ToolResult[]).map((p) => p.session_id)).toEqual([a.session_id, b.session_id]);
        expect(await start("sleep 30")).toMatchObject({
          error: expect.stringContaining("Too many background processes"),
        });
      } finally {
        await session.close();
      }
    });

    // Checked from a second session by pid: not where each session has its own pid namespace.
    it.skipIf(backend.ownPidNamespace === true)(
      "kills the session's background processes when it closes, and what ended ones left running",
      async () => {
        const session = await backend.create();
        const base = `/tmp/shellwright-close-test-${process.pid}-${backend.name.replace(/\W/g, "_")}`;
        const pidFiles = [`${base}-running.pid`, `${base}-left.pid`];
        await callTool(
          "terminal",
          { command: `echo $BASHPID > ${pidFiles[0]}; exec sleep 300`, background: true },
          { session },
        );
        const ended = await callTool(
          "terminal",
          { command: `sleep 301 & echo $! > ${pidFiles[1]}`, background: true },
          { session },
        );
        expect(await callTool("process", { action: "wait", session_id: ended.session_id }, { session })).toMatchObject({
          status: "exited",
        });
        await vi.waitFor(async () => expect((await session.execute(`cat ${pidFiles[0]}`)).exitCode).toBe(0), {
          timeout: 10_000,
          interval: 50,
        });
        const checker = await backend.create();
        try {
          expect((await checker.execute(aliveScript(pidFiles))).output.trim().split("\n")).toHaveLength(2);
          await session.close();
          await vi.waitFor(async () => expect((await checker.execute(aliveScript(pidFiles))).output).toBe(""), {
            timeout: 10_000,
            interval: 100,
          });
        } finally {
          await checker.execute(`rm -f ${pidFiles.join(" ")}`);
          await checker.close();
        }
      },
    );
  });
}
