/** hermes' API under the cases a client does not mean to send: limits, races, reaped or foreign sessions, bad paths. */

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { alive, eventually } from "../../helpers/processes.js";
import { pidsWithCmdline, killAll } from "../../helpers/proc-scan.js";
import { rawExchange } from "../../helpers/raw-http.js";
import { api, scratchDir, TOKEN } from "../helpers.js";
import { createBody, createSandbox, pollExec, runExec, startExec, startHermesGateway } from "./helpers.js";

describe("hermes API: hostile and unlucky requests", () => {
  const scratch = scratchDir();
  afterAll(() => scratch.remove());

  it("answers 429 past maxSessions, and keeps no idempotency key for a create that failed", async () => {
    const gateway = await startHermesGateway({ maxSessions: 1 });
    try {
      const first = await createSandbox(gateway, scratch.path);
      const key = randomUUID();
      const send = () =>
        api(gateway, "POST", "/v1/sandboxes", createBody(scratch.path), { headers: { "x-idempotency-key": key } });
      const full = await send();
      expect(full.status).toBe(429);
      expect(full.body).toMatchObject({ code: "TOO_MANY_SESSIONS", error: expect.stringContaining("maxSessions") });
      await api(gateway, "POST", `/v1/sandboxes/${first}/terminate`);
      const retried = await send();
      expect(retried.status).toBe(201);
      expect(retried.body.id).not.toBe(first);
    } finally {
      await gateway.close();
    }
  });

  it("forgets a sandbox reaped for idleness: its execs 404, and its key makes a new sandbox", async () => {
    const gateway = await startHermesGateway();
    try {
      const key = randomUUID();
      const send = () =>
        api(gateway, "POST", "/v1/sandboxes", createBody(scratch.path), { headers: { "x-idempotency-key": key } });
      const made = await send();
      expect(await gateway.registry.reapIdle(Date.now() + 24 * 3_600_000)).toEqual([made.body.id]);
      const exec = await api(gateway, "POST", `/v1/sandboxes/${made.body.id}/execs`, { execId: "e", command: "true" });
      expect(exec.status).toBe(404);
      expect(exec.body.error).toMatch(/idle timeout/);
      const again = await send();
      expect(again.status).toBe(201);
      expect(again.body.id).not.toBe(made.body.id);
    } finally {
      await gateway.close();
    }
  });

  it("does not act on a session opened through Shellwright's own API (404, nothing run)", async () => {
    const gateway = await startHermesGateway();
    try {
      const session = await api(gateway, "POST", "/v1/sessions", { cwd: scratch.path });
      const marker = `${scratch.path}/foreign-${randomUUID()}`;
      const exec = await api(gateway, "POST", `/v1/sandboxes/${session.body.id}/execs`, {
        execId: "e",
        command: `touch ${marker}`,
      });
      expect(exec.status).toBe(404);
      expect((await api(gateway, "POST", `/v1/sandboxes/${session.body.id}/terminate`)).status).toBe(404);
      expect((await api(gateway, "GET", `/v1/sessions/${session.body.id}`)).status).toBe(200);
      const check = await api(gateway, "POST", `/v1/sessions/${session.body.id}/executions`, {
        command: `test -e ${marker}; echo $?`,
      });
      expect(check.body.output).toBe("1\n");
    } finally {
      await gateway.close();
    }
  });

  it("refuses a body over maxBodyBytes with 413, running nothing", async () => {
    const gateway = await startHermesGateway({ maxBodyBytes: 4096 });
    try {
      const id = await createSandbox(gateway, scratch.path);
      const marker = `${scratch.path}/big-${randomUUID()}`;
      const big = await startExec(gateway, id, {
        command: `touch ${marker}`,
        cwd: scratch.path,
        stdinData: "x".repeat(8192),
      });
      expect(big.status).toBe(413);
      expect(big.body).toMatchObject({ code: "PAYLOAD_TOO_LARGE", error: expect.stringContaining("4096") });
      expect((await runExec(gateway, id, { command: `test -e ${marker}; echo $?`, cwd: scratch.path })).output).toBe(
        "1\n",
      );
    } finally {
      await gateway.close();
    }
  });

  it("answers 401 to a request whose body never comes, without waiting for it, and closes the connection", async () => {
    const gateway = await startHermesGateway();
    try {
      const answer = await rawExchange(
        gateway.port,
        "POST /v1/sandboxes HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n" +
          "content-length: 100000000\r\n\r\n{",
      );
      expect(answer.status).toBe(401);
      expect(answer.text).toMatch(/connection: close/i);
      expect(gateway.registry.size).toBe(0);
    } finally {
      await gateway.close();
    }
  });

  it("answers a malformed path escape with 400 given the token, 401 without", async () => {
    const gateway = await startHermesGateway();
    try {
      const path = "/v1/sandboxes/%E0%A4%A/execs";
      expect((await api(gateway, "POST", path, {}, { token: null })).status).toBe(401);
      const answer = await api(gateway, "POST", path, {});
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatch(/percent-encoding/);
    } finally {
      await gateway.close();
    }
  });

  it("keeps the last 16 results: an older exec's poll is a 404, and resending it a 409 naming execId", async () => {
    const gateway = await startHermesGateway();
    try {
      const id = await createSandbox(gateway, scratch.path);
      const ids: string[] = [];
      for (let i = 0; i < 17; i++) {
        const execId = `exec-${i}`;
        ids.push(execId);
        expect(await runExec(gateway, id, { command: `echo ${i}`, cwd: scratch.path, execId })).toMatchObject({
          output: `${i}\n`,
        });
      }
      expect((await api(gateway, "GET", `/v1/sandboxes/${id}/execs/${ids[0]}`)).status).toBe(404);
      expect((await api(gateway, "GET", `/v1/sandboxes/${id}/execs/${ids[1]}`)).body.output).toBe("1\n");
      const resent = await startExec(gateway, id, { command: "echo 0", cwd: scratch.path, execId: ids[0] });
      expect(resent.status).toBe(409);
      expect(resent.body).toMatchObject({ field: "execId", error: expect.stringContaining("no longer kept") });
    } finally {
      await gateway.close();
    }
  });

  it("stops a running exec's whole tree when the gateway closes", async () => {
    const gateway = await startHermesGateway();
    const id = await createSandbox(gateway, scratch.path);
    const file = `${scratch.path}/closing-${randomUUID()}`;
    const started = await startExec(gateway, id, {
      command: `setsid sleep 300 >/dev/null 2>&1 & echo $! > ${file}; wait`,
      cwd: scratch.path,
    });
    expect(started.status).toBe(202);
    await eventually(() => readFileSync(file, { encoding: "utf8", flag: "a+" }).trim() !== "", "the pid file");
    const pid = Number(readFileSync(file, "utf8"));
    await gateway.close();
    await eventually(() => !alive(pid), "the exec's process to be gone");
  });

  it("a cancel racing the start still ends the exec cancelled with 130", async () => {
    const gateway = await startHermesGateway();
    try {
      const id = await createSandbox(gateway, scratch.path);
      const execId = randomUUID();
      const start = startExec(gateway, id, { command: "sleep 30", cwd: scratch.path, execId });
      let cancel = await api(gateway, "POST", `/v1/sandboxes/${id}/execs/${execId}/cancel`);
      // The start may not have arrived yet: retry the cancel as a client would.
      await eventually(async () => {
        if (cancel.status !== 404) return true;
        cancel = await api(gateway, "POST", `/v1/sandboxes/${id}/execs/${execId}/cancel`);
        return cancel.status !== 404;
      }, "the cancel to find the exec");
      await start;
      const ended = await pollExec(gateway, id, execId);
      expect(ended.body).toMatchObject({ status: "cancelled", returncode: 130 });
    } finally {
      await gateway.close();
    }
  });
  // The exec's headers are in (its sandbox looked up) when the terminate comes; its body arrives during the terminate.
  it.each([0, 5, 10, 20, 30])(
    "a terminate racing an exec whose body comes %i ms later leaves none of its processes",
    async (delayMs) => {
      const gateway = await startHermesGateway();
      const sleepArg = String(400_000 + (process.pid % 1000) * 100 + delayMs);
      try {
        const id = await createSandbox(gateway, scratch.path);
        // An exec already running: the terminate waits for its kill, the window in which the racing body arrives.
        const running = await startExec(gateway, id, { command: "trap '' TERM; sleep 30 & wait", cwd: scratch.path });
        expect(running.status).toBe(202);
        const file = `${scratch.path}/racing-${randomUUID()}`;
        const body = JSON.stringify({
          execId: randomUUID(),
          command: `setsid sleep ${sleepArg} >/dev/null 2>&1 & echo $! > ${file}; wait`,
          cwd: scratch.path,
          timeoutMs: 60_000,
        });
        let sendBody!: () => void;
        const bodyReady = new Promise<string>((resolve) => (sendBody = () => resolve(body)));
        const exec = rawExchange(
          gateway.port,
          `POST /v1/sandboxes/${id}/execs HTTP/1.1\r\nHost: 127.0.0.1\r\nauthorization: Bearer ${TOKEN}\r\n` +
            `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`,
          30_000,
          bodyReady,
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
        const terminate = api(gateway, "POST", `/v1/sandboxes/${id}/terminate`);
        setTimeout(sendBody, delayMs);
        expect((await terminate).status).toBe(200);
        const answer = await exec;
        expect((await api(gateway, "GET", `/v1/sandboxes/${id}/execs/x`)).status).toBe(404);
        const pid = Number(readFileSync(file, { encoding: "utf8", flag: "a+" }).trim() || "0");
        if (pid > 0)
          await eventually(() => !alive(pid), "the racing exec's setsid child to be gone", 3000).catch(() => undefined);
        // By command line too: a child whose pid never reached the file.
        const left = pidsWithCmdline("sleep", sleepArg);
        killAll(left);
        expect(left, "the racing exec's processes still alive").toEqual([]);
        // Refused (the sandbox is gone), or started and then cancelled by the terminate: never left running.
        expect([200, 404], answer.text).toContain(answer.status);
      } finally {
        await gateway.close();
      }
    },
  );
});
