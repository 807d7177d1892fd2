/** The execution API over raw HTTP: JSON and streaming answers, cancel, and a client that hangs up. */

import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/index.js";
import { api, scratchDir, startTestGateway, TOKEN } from "./helpers.js";
import { alive, eventually } from "../helpers/processes.js";

describe("gateway executions", () => {
  let gateway: Gateway;
  let scratch: ReturnType<typeof scratchDir>;
  let id: string;
  let executions: string;

  beforeAll(async () => {
    scratch = scratchDir();
    gateway = await startTestGateway();
    const created = await api(gateway, "POST", "/v1/sessions", { cwd: scratch.path, env: { SW_FROM_REQUEST: "yes" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      backend: "local",
      cwd: scratch.path,
      snapshotReady: true,
      warnings: [],
      runningExecutions: 0,
    });
    id = created.body.id;
    executions = `/v1/sessions/${id}/executions`;
  });
  afterAll(async () => {
    await gateway.close();
    scratch.remove();
  });

  it("runs a command with the session model on the server: env and cwd persist", async () => {
    expect(
      (await api(gateway, "POST", executions, { command: "mkdir -p sub && cd sub && export SW_A=1" })).body,
    ).toMatchObject({ exitCode: 0, cwd: `${scratch.path}/sub` });
    const r = await api(gateway, "POST", executions, {
      command: "echo $SW_A $SW_FROM_REQUEST; pwd",
      executionId: "my-id_1",
    });
    expect(r.body).toMatchObject({
      output: `1 yes\n${scratch.path}/sub\n`,
      exitCode: 0,
      executionId: "my-id_1",
      timedOut: false,
      interrupted: false,
      truncated: false,
    });
    expect(typeof r.body.durationMs).toBe("number");
    await api(gateway, "POST", executions, { command: `cd ${scratch.path}` });
  });

  it("passes stdin as text or as base64 bytes", async () => {
    expect((await api(gateway, "POST", executions, { command: "cat", stdin: "héllo\n" })).body.output).toBe("héllo\n");
    const bytes = Buffer.from([0, 1, 2, 255, 10]);
    const r = await api(gateway, "POST", executions, {
      command: "od -An -tx1 | tr -d ' \\n'",
      stdinBase64: bytes.toString("base64"),
    });
    expect(r.body.output).toBe("000102ff0a");
    expect((await api(gateway, "POST", executions, { command: "true", stdin: "a", stdinBase64: "YQ==" })).status).toBe(
      400,
    );
  });

  it("streams output as NDJSON events, then the result", async () => {
    const response = await fetch(`${gateway.url}${executions}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ command: "echo one; sleep 0.2; echo two; exit 3", stream: true, executionId: "streamed" }),
    });
    expect(response.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    const events = (await response.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events[0]).toEqual({ type: "started", executionId: "streamed" });
    const last = events.at(-1);
    expect(last).toMatchObject({
      type: "result",
      result: { exitCode: 3, output: "one\ntwo\n", executionId: "streamed" },
    });
    const text = events
      .filter((e) => e.type === "output")
      .map((e) => e.text)
      .join("");
    expect(text).toBe("one\ntwo\n");
    // the output arrived in more than one event: it was streamed, not sent at the end
    expect(events.filter((e) => e.type === "output").length).toBeGreaterThan(1);
  });

  it("keeps stdout and stderr apart only when asked: an older client's request and events are unchanged", async () => {
    const streamed = async (body: Record<string, unknown>) => {
      const response = await fetch(`${gateway.url}${executions}`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ ...body, stream: true }),
      });
      return (await response.text())
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown> & { type: string });
    };
    const command = `echo out; echo err >&2; echo ${TOKEN} >&2`;
    // As a client without separateStreams sends it: merged events with no `stream`, a result with no stdout/stderr.
    const old = await streamed({ command });
    const oldOutput = old.filter((e) => e.type === "output");
    expect(oldOutput.every((e) => Object.keys(e).sort().join() === "text,type")).toBe(true);
    expect(oldOutput.map((e) => e.text).join("")).toBe("out\nerr\n[REDACTED]\n");
    expect(old.at(-1)!.result).not.toHaveProperty("stdout");
    expect((await api(gateway, "POST", executions, { command })).body).not.toHaveProperty("stderr");

    // Asked: each output event names its stream, the result has both, the token masked in each.
    const apart = await streamed({ command, separateStreams: true });
    const of = (stream: string) =>
      apart
        .filter((e) => e.type === "output" && e.stream === stream)
        .map((e) => e.text)
        .join("");
    expect({ out: of("stdout"), err: of("stderr") }).toEqual({ out: "out\n", err: "err\n[REDACTED]\n" });
    expect(apart.at(-1)!.result).toMatchObject({ stdout: "out\n", stderr: "err\n[REDACTED]\n" });
    expect(JSON.stringify(apart)).not.toContain(TOKEN);
    const json = await api(gateway, "POST", executions, { command, separateStreams: true });
    expect(json.body).toMatchObject({ stdout: "out\n", stderr: "err\n[REDACTED]\n" });
    const bad = await api(gateway, "POST", executions, { command, separateStreams: "yes" });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: "INVALID_OPTION", option: "separateStreams" } } });
  });

  it("cancels a running execution by id: 130 with the partial output", async () => {
    const pending = api(gateway, "POST", executions, { command: "echo before; sleep 60", executionId: "to-cancel" });
    await eventually(() => gateway.registry.runningExecutions === 1);
    const cancel = await api(gateway, "POST", `${executions}/to-cancel/cancel`, {});
    expect(cancel).toMatchObject({ status: 202, body: { cancelled: true } });
    expect((await pending).body).toMatchObject({ exitCode: 130, interrupted: true });
    expect((await api(gateway, "POST", `${executions}/to-cancel/cancel`, {})).status).toBe(404);
  });

  it("runs an execution id at most once, and says what it knows of an id", async () => {
    expect(
      (await api(gateway, "POST", executions, { command: "echo once", executionId: "only-once" })).body.output,
    ).toBe("once\n");
    const again = await api(gateway, "POST", executions, { command: "echo twice", executionId: "only-once" });
    expect(again).toMatchObject({ status: 409, body: { error: { code: "DUPLICATE_EXECUTION" } } });
    expect(again.body.error.message).toContain("already ran");
    expect((await api(gateway, "GET", `${executions}/only-once`)).body).toEqual({
      executionId: "only-once",
      state: "finished",
    });
    expect((await api(gateway, "GET", `${executions}/never-sent`)).status).toBe(404);
    expect(
      (await api(gateway, "POST", executions, { command: "true", executionId: "bad id!" })).body.error.option,
    ).toBe("executionId");
  });

  for (const stream of [false, true]) {
    it(`kills the command when the client disconnects mid-execution (${stream ? "streaming" : "JSON"})`, async () => {
      const pidFile = join(scratch.path, `pids-${stream}`);
      const body = JSON.stringify({
        command: `(sleep 300 & echo $! >> ${pidFile}; wait) & echo $! >> ${pidFile}; echo spawned; wait`,
        stream,
      });
      const req = request(`${gateway.url}${executions}`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      });
      req.on("error", () => undefined);
      req.end(body);
      await eventually(() => {
        try {
          return readFileSync(pidFile, "utf8").trim().split("\n").length === 2;
        } catch {
          return false;
        }
      });
      const pids = readFileSync(pidFile, "utf8").trim().split("\n").map(Number);
      expect(pids.every(alive)).toBe(true);
      req.destroy();
      await eventually(() => !pids.some(alive), "the command's processes to be killed");
      await eventually(() => gateway.registry.runningExecutions === 0);
      // the session is still usable
      expect((await api(gateway, "POST", executions, { command: "echo usable" })).body.output).toBe("usable\n");
    });
  }

  it("lists, shows and closes sessions", async () => {
    const other = (await api(gateway, "POST", "/v1/sessions", {})).body.id as string;
    const list = await api(gateway, "GET", "/v1/sessions");
    expect(list.body.sessions.map((s: { id: string }) => s.id).sort()).toEqual([id, other].sort());
    expect((await api(gateway, "GET", `/v1/sessions/${other}`)).body).toMatchObject({
      id: other,
      backend: "local",
      runningExecutions: 0,
    });
    expect((await api(gateway, "DELETE", `/v1/sessions/${other}`)).status).toBe(204);
    const gone = await api(gateway, "GET", `/v1/sessions/${other}`);
    expect(gone).toMatchObject({ status: 404, body: { error: { code: "SESSION_NOT_FOUND" } } });
    expect((await api(gateway, "POST", `/v1/sessions/${other}/executions`, { command: "true" })).status).toBe(404);
    expect((await api(gateway, "DELETE", `/v1/sessions/${other}`)).status).toBe(404);
  });
});
