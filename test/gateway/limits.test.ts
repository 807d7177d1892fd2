/** Session and execution limits (429), and idle reaping, measured over real HTTP. */

import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../helpers/close-after-each.js";
import { createEnvironment, SessionClosedError, type Gateway } from "../../src/index.js";
import { api, startTestGateway, TOKEN } from "./helpers.js";
import { eventually } from "../helpers/processes.js";

const keep = closeAfterEach((gateway: Gateway) => gateway.close());

describe("gateway limits", () => {
  it("answers 429 once maxSessions are open, and takes one again after a close", async () => {
    const gateway = keep(await startTestGateway({ maxSessions: 2 }));
    const first = await api(gateway, "POST", "/v1/sessions", {});
    const second = await api(gateway, "POST", "/v1/sessions", {});
    expect([first.status, second.status]).toEqual([201, 201]);
    const third = await api(gateway, "POST", "/v1/sessions", {});
    expect(third).toMatchObject({ status: 429, body: { error: { code: "TOO_MANY_SESSIONS" } } });
    expect(third.body.error.message).toContain("maxSessions");
    expect(gateway.registry.size).toBe(2);
    expect((await api(gateway, "DELETE", `/v1/sessions/${first.body.id}`)).status).toBe(204);
    expect((await api(gateway, "POST", "/v1/sessions", {})).status).toBe(201);
  });

  it("counts sessions still opening against the limit", async () => {
    const gateway = keep(await startTestGateway({ maxSessions: 3 }));
    const answers = await Promise.all(Array.from({ length: 8 }, () => api(gateway, "POST", "/v1/sessions", {})));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(5);
    expect(gateway.registry.size).toBe(3);
  });

  it("answers 429 with a retry hint once maxConcurrentExecutions run", async () => {
    const gateway = keep(await startTestGateway({ maxConcurrentExecutions: 1 }));
    const { id } = (await api(gateway, "POST", "/v1/sessions", {})).body;
    const slow = api(gateway, "POST", `/v1/sessions/${id}/executions`, { command: "sleep 30", executionId: "slow" });
    await eventually(() => gateway.registry.runningExecutions === 1, "the slow execution to start");
    const refused = await api(gateway, "POST", `/v1/sessions/${id}/executions`, { command: "echo refused" });
    expect(refused).toMatchObject({ status: 429, body: { error: { code: "TOO_MANY_EXECUTIONS", retryAfterMs: 100 } } });
    expect(refused.headers.get("retry-after")).toBe("1");
    expect((await api(gateway, "POST", `/v1/sessions/${id}/executions/slow/cancel`, {})).status).toBe(202);
    expect((await slow).body).toMatchObject({ exitCode: 130, interrupted: true });
    expect((await api(gateway, "POST", `/v1/sessions/${id}/executions`, { command: "echo now" })).body.output).toBe(
      "now\n",
    );
  });

  it("the gateway backend waits out a 429 and still gets every result", async () => {
    const gateway = keep(await startTestGateway({ maxConcurrentExecutions: 1 }));
    const env = await createEnvironment({ backend: "gateway", url: gateway.url, token: TOKEN });
    try {
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => env.execute(`sleep 0.1; echo call-${i}`)));
      expect(results.map((r) => r.output)).toEqual(Array.from({ length: 6 }, (_, i) => `call-${i}\n`));
    } finally {
      await env.close();
    }
  });

  it("refuses a second execution with the same id while the first runs (409)", async () => {
    const gateway = keep(await startTestGateway());
    const { id } = (await api(gateway, "POST", "/v1/sessions", {})).body;
    const first = api(gateway, "POST", `/v1/sessions/${id}/executions`, { command: "sleep 30", executionId: "same" });
    await eventually(() => gateway.registry.runningExecutions === 1);
    const second = await api(gateway, "POST", `/v1/sessions/${id}/executions`, {
      command: "true",
      executionId: "same",
    });
    expect(second).toMatchObject({ status: 409, body: { error: { code: "DUPLICATE_EXECUTION" } } });
    await api(gateway, "POST", `/v1/sessions/${id}/executions/same/cancel`, {});
    expect((await first).body.exitCode).toBe(130);
  });

  it("reaps an idle session, but not one with a command running", async () => {
    const gateway = keep(await startTestGateway({ idleTimeoutMs: 300 }));
    const idle = await createEnvironment({ backend: "gateway", url: gateway.url, token: TOKEN });
    const busy = (await api(gateway, "POST", "/v1/sessions", {})).body.id as string;
    const running = api(gateway, "POST", `/v1/sessions/${busy}/executions`, { command: "sleep 2; echo done" });
    await eventually(
      async () => (await api(gateway, "GET", `/v1/sessions/${idle.id}`)).status === 404,
      "the idle session to be reaped",
    );
    // The busy one ran all along: its command finished normally.
    expect((await running).body).toMatchObject({ exitCode: 0, output: "done\n" });
    await expect(idle.execute("echo again")).rejects.toThrow(SessionClosedError);
    await expect(idle.execute("echo again")).rejects.toThrow(/closed/);
    await idle.close();
  });
});
