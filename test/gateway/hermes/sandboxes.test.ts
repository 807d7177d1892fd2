/** hermes' sandbox API over real HTTP: access, creates and their idempotency keys, terminate, errors. */

import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/index.js";
import { alive, eventually } from "../../helpers/processes.js";
import { api, scratchDir } from "../helpers.js";
import { createBody, createSandbox, runExec, startHermesGateway } from "./helpers.js";

describe("hermes API: sandboxes", () => {
  let gateway: Gateway;
  const scratch = scratchDir();
  beforeAll(async () => {
    gateway = await startHermesGateway();
  });
  afterAll(async () => {
    await gateway.close();
    scratch.remove();
  });

  it("answers 401 without the token on every route, before reading a body, and runs nothing", async () => {
    const id = await createSandbox(gateway, scratch.path);
    const before = gateway.registry.size;
    const marker = `${scratch.path}/ran-without-token`;
    const calls: [string, string, unknown][] = [
      ["POST", "/v1/sandboxes", createBody(scratch.path)],
      ["POST", `/v1/sandboxes/${id}/execs`, { execId: "e1", command: `touch ${marker}`, cwd: scratch.path }],
      ["GET", `/v1/sandboxes/${id}/execs/e1`, undefined],
      ["POST", `/v1/sandboxes/${id}/execs/e1/cancel`, undefined],
      ["POST", `/v1/sandboxes/${id}/terminate`, { snapshotBeforeTerminate: false }],
      ["POST", "/v1/sandboxes/nope/terminate", undefined],
    ];
    for (const token of [null, "wrong-token-0123456789abcdef"]) {
      for (const [method, path, body] of calls) {
        const answer = await api(gateway, method, path, body, { token });
        expect(answer.status, `${method} ${path}`).toBe(401);
        expect(answer.body).toMatchObject({ code: "UNAUTHORIZED", error: expect.stringContaining("Bearer") });
      }
    }
    expect(gateway.registry.size).toBe(before);
    expect((await runExec(gateway, id, { command: `test -e ${marker}; echo $?`, cwd: scratch.path })).output).toBe(
      "1\n",
    );
  });

  it("makes each sandbox a Shellwright session, opened in the cwd asked for, and says what it ignores", async () => {
    const made = await api(gateway, "POST", "/v1/sandboxes", createBody(scratch.path), {
      headers: { "x-idempotency-key": randomUUID() },
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ status: "running", warnings: [] });
    expect(made.body.ignoredFields).toEqual([
      "image",
      "cpu",
      "memoryMiB",
      "timeoutMs",
      "idleTimeoutMs",
      "persistentFilesystem",
      "logicalKey",
    ]);
    const session = await api(gateway, "GET", `/v1/sessions/${made.body.id}`);
    expect(session.status).toBe(200);
    // Opened (initialised) at create, before any exec.
    expect(session.body).toMatchObject({ id: made.body.id, cwd: scratch.path, snapshotReady: true });
  });

  it("gives the same sandbox for the same idempotency key, also to creates racing each other", async () => {
    const key = randomUUID();
    const before = gateway.registry.size;
    const send = () =>
      api(gateway, "POST", "/v1/sandboxes", createBody(scratch.path), { headers: { "x-idempotency-key": key } });
    const [a, b] = await Promise.all([send(), send()]);
    const c = await send();
    expect(new Set([a.body.id, b.body.id, c.body.id]).size).toBe(1);
    expect([a.status, b.status, c.status].sort()).toEqual([200, 200, 201]);
    expect(gateway.registry.size).toBe(before + 1);

    const other = await api(gateway, "POST", "/v1/sandboxes", createBody(scratch.path), {
      headers: { "x-idempotency-key": randomUUID() },
    });
    const keyless = await api(gateway, "POST", "/v1/sandboxes", createBody(scratch.path));
    expect(new Set([a.body.id, other.body.id, keyless.body.id]).size).toBe(3);
  });

  it("refuses a reused idempotency key with another body, and a bad key, naming the header", async () => {
    const key = randomUUID();
    await api(gateway, "POST", "/v1/sandboxes", createBody(scratch.path), { headers: { "x-idempotency-key": key } });
    const before = gateway.registry.size;
    const changed = await api(
      gateway,
      "POST",
      "/v1/sandboxes",
      { ...createBody(scratch.path), cpu: 4 },
      {
        headers: { "x-idempotency-key": key },
      },
    );
    expect(changed.status).toBe(409);
    expect(changed.body).toMatchObject({
      field: "x-idempotency-key",
      error: expect.stringContaining("different body"),
    });
    const long = await api(gateway, "POST", "/v1/sandboxes", createBody(scratch.path), {
      headers: { "x-idempotency-key": "k".repeat(300) },
    });
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ field: "x-idempotency-key", error: expect.stringContaining("1–256") });
    expect(gateway.registry.size).toBe(before);
  });

  it.each([
    [{ cwd: "relative/dir" }, "cwd", '"relative/dir"', 400],
    [{ cwd: 7 }, "cwd", "7", 400],
    [{ cpu: "lots" }, "cpu", '"lots"', 400],
    [{ memoryMiB: -1 }, "memoryMiB", "-1", 400],
    [{ timeoutMs: 0 }, "timeoutMs", "0", 400],
    [{ persistentFilesystem: "yes" }, "persistentFilesystem", '"yes"', 400],
    [{ image: 3 }, "image", "3", 400],
    [{ gpu: "A100" }, "gpu", '"gpu"', 400],
  ])("refuses create field %j with a 400 naming the field and the value", async (change, field, value, status) => {
    const before = gateway.registry.size;
    const answer = await api(gateway, "POST", "/v1/sandboxes", { ...createBody(scratch.path), ...change });
    expect(answer.status).toBe(status);
    expect(answer.body.field).toBe(field);
    expect(answer.body.error).toContain(field);
    expect(answer.body.error).toContain(value);
    expect(gateway.registry.size).toBe(before);
  });

  it("refuses a cwd outside the gateway's allowed roots (403), a body that is not JSON, and a wrong method", async () => {
    const narrow = await startHermesGateway({ allowedRoots: [scratch.path] });
    try {
      const outside = await api(narrow, "POST", "/v1/sandboxes", createBody("/etc"));
      expect(outside.status).toBe(403);
      expect(outside.body).toMatchObject({ field: "cwd", error: expect.stringContaining('"/etc"') });
      const notJson = await api(narrow, "POST", "/v1/sandboxes", undefined, { rawBody: "{image" });
      expect(notJson.status).toBe(400);
      expect(notJson.body.error).toMatch(/not valid JSON/);
      const array = await api(narrow, "POST", "/v1/sandboxes", [1]);
      expect(array.body.error).toMatch(/must be a JSON object, got an array/);
      const text = await api(narrow, "POST", "/v1/sandboxes", undefined, {
        rawBody: "{}",
        headers: { "content-type": "text/plain" },
      });
      expect(text.status).toBe(415);
      expect((await api(narrow, "GET", "/v1/sandboxes")).status).toBe(405);
      expect(narrow.registry.size).toBe(0);
    } finally {
      await narrow.close();
    }
  });

  it("answers clear 404s for an unknown sandbox, exec or route", async () => {
    const id = await createSandbox(gateway, scratch.path);
    for (const [method, path] of [
      ["POST", "/v1/sandboxes/0123456789ab/terminate"],
      ["GET", "/v1/sandboxes/0123456789ab/execs/e1"],
      ["POST", "/v1/sandboxes/0123456789ab/execs/e1/cancel"],
    ] as const) {
      const answer = await api(gateway, method, path);
      expect(answer.status, path).toBe(404);
      expect(answer.body).toMatchObject({ code: "SESSION_NOT_FOUND", error: expect.stringContaining("0123456789ab") });
    }
    const start = await api(gateway, "POST", "/v1/sandboxes/0123456789ab/execs", {
      execId: "e1",
      command: "true",
    });
    expect(start.status).toBe(404);
    const exec = await api(gateway, "GET", `/v1/sandboxes/${id}/execs/never-started`);
    expect(exec.status).toBe(404);
    expect(exec.body).toMatchObject({ code: "EXECUTION_NOT_FOUND", error: expect.stringContaining("never-started") });
    for (const path of [`/v1/sandboxes/${id}`, `/v1/sandboxes/${id}/files`, `/v1/sandboxes/${id}/execs/x/kill`]) {
      const answer = await api(gateway, "POST", path);
      expect(answer.status, path).toBe(404);
    }
  });

  it("terminate closes the session and ends every process of it, a detached one ignoring SIGTERM too", async () => {
    const id = await createSandbox(gateway, scratch.path);
    const pidFile = `${scratch.path}/detached-${id}`;
    const started = await runExec(gateway, id, {
      command: `setsid sh -c 'trap "" TERM; exec sleep 300' >/dev/null 2>&1 & echo $! > ${pidFile}; sleep 300 >/dev/null 2>&1 & echo $!`,
      cwd: scratch.path,
    });
    expect(started.status).toBe("completed");
    const { readFileSync } = await import("node:fs");
    const pids = [Number(readFileSync(pidFile, "utf8")), Number(started.output)];
    expect(pids.every(alive)).toBe(true);

    const ended = await api(gateway, "POST", `/v1/sandboxes/${id}/terminate`, { snapshotBeforeTerminate: true });
    expect(ended).toMatchObject({ status: 200, body: { id, status: "terminated" } });
    await eventually(() => !pids.some(alive), "the sandbox's processes to end");
    expect((await api(gateway, "GET", `/v1/sessions/${id}`)).status).toBe(404);
    expect((await api(gateway, "POST", `/v1/sandboxes/${id}/terminate`)).status).toBe(404);
    const after = await api(gateway, "POST", `/v1/sandboxes/${id}/execs`, { execId: "late", command: "true" });
    expect(after.status).toBe(404);
  });

  it("refuses a bad terminate body, and forgets a sandbox whose session was closed through Shellwright's API", async () => {
    const id = await createSandbox(gateway, scratch.path);
    const bad = await api(gateway, "POST", `/v1/sandboxes/${id}/terminate`, { snapshotBeforeTerminate: "please" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ field: "snapshotBeforeTerminate", error: expect.stringContaining('"please"') });
    expect((await api(gateway, "DELETE", `/v1/sessions/${id}`)).status).toBe(204);
    const gone = await api(gateway, "POST", `/v1/sandboxes/${id}/execs`, { execId: "e1", command: "true" });
    expect(gone.status).toBe(404);
    expect(gone.body.error).toContain(id);
  });

  it("serves only hermes' routes when it is the one API asked for", async () => {
    const alone = await startHermesGateway({ apis: ["hermes"] });
    try {
      expect((await api(alone, "GET", "/v1/sessions")).status).toBe(404);
      expect((await api(alone, "POST", "/v1/sandboxes", createBody(scratch.path))).status).toBe(201);
    } finally {
      await alone.close();
    }
  });
});
