/** hermes' execs over real HTTP: state across execs, polling, timeouts, cancels, stdin, bad fields. */

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/index.js";
import { alive, eventually } from "../../helpers/processes.js";
import { api, scratchDir, TOKEN } from "../helpers.js";
import { createSandbox, pollExec, runExec, startExec, startHermesGateway } from "./helpers.js";

describe("hermes API: execs", () => {
  let gateway: Gateway;
  let id: string;
  const scratch = scratchDir();
  const run = (command: string, extra: { timeoutMs?: number; stdinData?: string; cwd?: string } = {}) =>
    runExec(gateway, id, { command, cwd: scratch.path, ...extra });
  beforeAll(async () => {
    gateway = await startHermesGateway();
    id = await createSandbox(gateway, scratch.path);
  });
  afterAll(async () => {
    await gateway.close();
    scratch.remove();
  });

  it("keeps cwd, variables, functions and aliases across execs that all name the start directory", async () => {
    expect(await run("cd /tmp")).toMatchObject({ status: "completed", returncode: 0 });
    expect((await run("pwd")).output).toBe("/tmp\n");
    await run("export X=1; greet() { echo hi $1; }; alias ll='echo aliased'");
    expect((await run("echo $X")).output).toBe("1\n");
    expect((await run("greet there")).output).toBe("hi there\n");
    expect((await run("ll")).output).toBe("aliased\n");
    await run(`cd ${scratch.path}`);
  });

  it("runs an exec naming another directory there, without moving the session", async () => {
    expect((await run("pwd", { cwd: "/tmp" })).output).toBe("/tmp\n");
    expect((await run("pwd")).output).toBe(`${scratch.path}\n`);
  });

  it("answers 202 running while the command runs, the result on the poll after its end", async () => {
    const gate = `${scratch.path}/gate-${randomUUID()}`;
    const slow = await startExec(gateway, id, {
      command: `while [ ! -e ${gate} ]; do sleep 0.05; done; echo slow; exit 3`,
      cwd: scratch.path,
    });
    expect(slow.status).toBe(202);
    expect(slow.body).toEqual({ execId: slow.body.execId, status: "running" });
    const running = await api(gateway, "GET", `/v1/sandboxes/${id}/execs/${slow.body.execId}`);
    expect(running).toMatchObject({ status: 200, body: { status: "running" } });
    await run(`touch ${gate}`, { cwd: "/tmp" });
    const done = await pollExec(gateway, id, slow.body.execId);
    expect(done.body).toEqual({ execId: slow.body.execId, status: "completed", output: "slow\n", returncode: 3 });
  });

  it("answers a start with the result itself (200) when the command has ended by then", async () => {
    // Whether `echo` ends within the start's wait depends on the machine: either answer must be whole.
    const started = await startExec(gateway, id, { command: "echo quick", cwd: scratch.path });
    if (started.status === 200)
      expect(started.body).toEqual({
        execId: started.body.execId,
        status: "completed",
        output: "quick\n",
        returncode: 0,
      });
    else expect(started).toMatchObject({ status: 202, body: { status: "running" } });
  });

  it("times out with status timeout and 124, and kills the command's whole tree (by pid)", async () => {
    const file = `${scratch.path}/timeout-pids`;
    const result = await run(
      `setsid sh -c 'trap "" TERM; exec sleep 30' >/dev/null 2>&1 & echo $! > ${file}; sleep 30 & echo $! >> ${file}; wait`,
      { timeoutMs: 1000 },
    );
    expect(result).toMatchObject({ status: "timeout", returncode: 124 });
    const pids = readFileSync(file, "utf8").trim().split("\n").map(Number);
    expect(pids).toHaveLength(2);
    await eventually(() => !pids.some(alive), "the timed-out tree to be gone");
    // The session lives on.
    expect(await run("echo still")).toMatchObject({ status: "completed", output: "still\n" });
  });

  it("cancels a running exec: status cancelled, 130, its tree killed (by pid); a second cancel answers the result", async () => {
    const file = `${scratch.path}/cancel-pid-${randomUUID()}`;
    const started = await startExec(gateway, id, {
      command: `sleep 30 & echo $! > ${file}; wait`,
      cwd: scratch.path,
    });
    expect(started.status).toBe(202);
    const execId = started.body.execId as string;
    await eventually(() => readFileSync(file, { encoding: "utf8", flag: "a+" }).trim() !== "", "the pid file");
    const pid = Number(readFileSync(file, "utf8"));
    expect(alive(pid)).toBe(true);
    const cancel = await api(gateway, "POST", `/v1/sandboxes/${id}/execs/${execId}/cancel`);
    expect(cancel).toMatchObject({ status: 202, body: { execId, status: "cancelling" } });
    const ended = await pollExec(gateway, id, execId);
    expect(ended.body).toMatchObject({ status: "cancelled", returncode: 130 });
    await eventually(() => !alive(pid), "the cancelled command to be gone");
    const again = await api(gateway, "POST", `/v1/sandboxes/${id}/execs/${execId}/cancel`);
    expect(again).toMatchObject({ status: 200, body: { status: "cancelled", returncode: 130 } });
  });

  it("delivers stdinData byte for byte", async () => {
    const data = "line one\r\nno newline at end: ünïcödé ☃ $HOME `x` \\ \t";
    const result = await run("od -An -v -tx1 | tr -d ' \\n'", { stdinData: data });
    expect(result.status).toBe("completed");
    expect(result.output).toBe(Buffer.from(data, "utf8").toString("hex"));
    // Without stdinData, stdin is empty.
    expect((await run("wc -c")).output.trim()).toBe("0");
  });

  it("runs a resent start once: the same execId and command give the same exec, another command a 409", async () => {
    const counter = `${scratch.path}/counter-${randomUUID()}`;
    const gate = `${scratch.path}/gate-${randomUUID()}`;
    const execId = randomUUID();
    const command = `echo x >> ${counter}; while [ ! -e ${gate} ]; do sleep 0.05; done; wc -l < ${counter}`;
    const first = await startExec(gateway, id, { command, cwd: scratch.path, execId });
    expect(first.status).toBe(202);
    // Resent while it runs, and again after its end.
    expect(await startExec(gateway, id, { command, cwd: scratch.path, execId })).toMatchObject({
      status: 202,
      body: { execId, status: "running" },
    });
    await run(`touch ${gate}`, { cwd: "/tmp" });
    const ended = await pollExec(gateway, id, execId);
    expect(ended.body).toMatchObject({ status: "completed", output: "1\n" });
    const resent = await startExec(gateway, id, { command, cwd: scratch.path, execId });
    expect(resent).toMatchObject({ status: 200, body: ended.body });
    expect(readFileSync(counter, "utf8")).toBe("x\n");
    const other = await startExec(gateway, id, { command: "echo other", cwd: scratch.path, execId });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ field: "execId", error: expect.stringContaining(execId) });
  });

  it.each([
    [{ execId: "has space" }, "execId", '"has space"'],
    [{ execId: 12 }, "execId", "12"],
    [{ command: 5 }, "command", "5"],
    [{ command: undefined }, "command", "required"],
    [{ command: "echo\u0000x" }, "command", "NUL"],
    [{ timeoutMs: -5 }, "timeoutMs", "-5"],
    [{ timeoutMs: "60000" }, "timeoutMs", '"60000"'],
    [{ stdinData: 9 }, "stdinData", "9"],
    [{ cwd: "tmp" }, "cwd", '"tmp"'],
    [{ env: { A: "1" } }, "env", '"env"'],
  ])(
    "refuses exec field %j with a 400 naming the field and the value, running nothing",
    async (change, field, word) => {
      const marker = `${scratch.path}/ran-${randomUUID()}`;
      const answer = await api(gateway, "POST", `/v1/sandboxes/${id}/execs`, {
        execId: randomUUID(),
        command: `touch ${marker}`,
        cwd: scratch.path,
        ...change,
      });
      expect(answer.status).toBe(400);
      expect(answer.body.field).toBe(field);
      expect(answer.body.error).toContain(word);
      expect((await run(`test -e ${marker}; echo $?`)).output).toBe("1\n");
    },
  );

  it("masks the gateway's token in what a command prints", async () => {
    const result = await run(`echo "${TOKEN.slice(0, 10)}""${TOKEN.slice(10)}"`);
    expect(result.status).toBe("completed");
    expect(result.output).not.toContain(TOKEN);
  });
});
