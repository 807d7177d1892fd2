/**
 * Long-lived executions (the followers of PTYs and of background processes
 * with a listener, the end watchers of notify_on_complete) over real HTTP
 * with two clients: they never count against maxConcurrentExecutions, so one
 * client's PTYs cannot make another client's call wait; each session and the
 * gateway as a whole have bounds of their own, and past them the start of a
 * process fails at once with an error that names the bound, leaving nothing running.
 */

import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createEnvironment, type Environment, type Gateway, type GatewayOptions } from "../../src/index.js";
import { callTool } from "../../src/tools/registry.js";
import type { ToolResult } from "../../src/tools/shared/tool-definition.js";
import { alive, eventually } from "../helpers/processes.js";
import { noStaticHelper, skipAllUnless } from "../helpers/native-helper.js";
import { api, scratchDir, startTestGateway, TOKEN } from "./helpers.js";

let gateway: Gateway | undefined;
const clients: Environment[] = [];
const scratch = scratchDir();
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
  await gateway?.close();
  gateway = undefined;
});

async function start(options: GatewayOptions): Promise<Gateway> {
  gateway = await startTestGateway({ cwd: scratch.path, ...options });
  return gateway;
}

/** A client of its own (a session of its own); a 429 it may retry is retried for 2 s at most. */
async function client(): Promise<Environment> {
  const env = await createEnvironment({ backend: "gateway", url: gateway!.url, token: TOKEN, busyTimeoutMs: 2000 });
  clients.push(env);
  return env;
}

/** A PTY program that records its pid, then waits. */
const ptyProgram = (name: string): string => `echo $$ > ${scratch.path}/${name}.pid; exec sleep 300`;
const startPty = (session: Environment, name: string): Promise<ToolResult> =>
  callTool("terminal", { command: ptyProgram(name), background: true, pty: true }, { session });
const pidOf = (name: string): number | undefined => {
  const file = `${scratch.path}/${name}.pid`;
  return existsSync(file) ? Number(readFileSync(file, "utf8")) : undefined;
};

describe("gateway: long-lived executions", () => {
  skipAllUnless(noStaticHelper);

  it("one client's PTYs, more than maxConcurrentExecutions, never make another client's call wait", async () => {
    await start({ maxConcurrentExecutions: 2 });
    const tenant = await client();
    const other = await client();
    for (let i = 0; i < 4; i++) {
      const started = await startPty(tenant, `many-${i}`);
      expect(started, JSON.stringify(started)).toMatchObject({ status: "running", pty: true });
    }
    // Four followers run, and not one of them is a call in flight.
    await eventually(() => gateway!.registry.longLivedExecutions === 4, "the four followers to run");
    expect(gateway!.registry.runningExecutions).toBe(0);
    // Both the other client and the tenant itself still get calls through, two at once.
    const [a, b, c] = await Promise.all([
      other.execute("echo other client"),
      other.execute("echo again"),
      tenant.execute("echo tenant"),
    ]);
    expect([a.output, b.output, c.output]).toEqual(["other client\n", "again\n", "tenant\n"]);
    const health = await api(gateway!, "GET", "/v1/health");
    expect(health.body).toMatchObject({ runningExecutions: 0, longLivedExecutions: 4 });
  });

  it("past maxLongLivedPerSession a PTY fails to start with an error naming the bound, and nothing of it runs", async () => {
    await start({ maxLongLivedPerSession: 2 });
    const tenant = await client();
    const other = await client();
    for (const name of ["first", "second"])
      expect(await startPty(tenant, name)).toMatchObject({ status: "running", pty: true });
    const refused = await startPty(tenant, "third");
    expect(refused.error).toContain("maxLongLivedPerSession");
    expect(refused.error).toContain("limit of 2 long-lived executions");
    // It may have started before its follower was refused; it was ended then.
    const third = pidOf("third");
    if (third !== undefined) await eventually(() => !alive(third), `the refused PTY's program (pid ${third}) to end`);
    expect(gateway!.registry.longLivedExecutions).toBe(2);
    // The bound is the session's: another session starts its own, and calls run everywhere.
    expect(await startPty(other, "other")).toMatchObject({ status: "running", pty: true });
    expect((await tenant.execute("echo still")).output).toBe("still\n");
    // Ending one of the tenant's gives its slot back.
    const listed = await callTool("process", { action: "list" }, { session: tenant });
    const first = (listed.processes as { session_id: string }[])[0]!.session_id;
    await callTool("process", { action: "kill", session_id: first }, { session: tenant });
    await eventually(() => gateway!.registry.longLivedExecutions === 2, "the killed PTY's follower to end");
    expect(await startPty(tenant, "fourth")).toMatchObject({ status: "running", pty: true });
  });

  it("maxLongLivedExecutions bounds them across sessions, and counts notify_on_complete's watcher", async () => {
    await start({ maxLongLivedPerSession: 5, maxLongLivedExecutions: 3 });
    const tenant = await client();
    const other = await client();
    expect(await startPty(tenant, "a")).toMatchObject({ status: "running" });
    const watched = await callTool(
      "terminal",
      { command: "exec sleep 300", background: true, notify_on_complete: true },
      { session: tenant },
    );
    expect(watched).toMatchObject({ status: "running", notify_on_complete: true });
    expect(await startPty(other, "b")).toMatchObject({ status: "running" });
    await eventually(() => gateway!.registry.longLivedExecutions === 3, "three long-lived executions");
    const refused = await startPty(other, "c");
    expect(refused.error).toContain("maxLongLivedExecutions");
    expect((await other.execute("echo calls still run")).output).toBe("calls still run\n");
  });
});

describe("gateway: the longLived field over raw HTTP", () => {
  it("refuses a longLived that is not a boolean, and answers past the bound with 429 and no retry hint", async () => {
    await start({ maxLongLivedPerSession: 1 });
    const { id } = (await api(gateway!, "POST", "/v1/sessions", {})).body;
    const bad = await api(gateway!, "POST", `/v1/sessions/${id}/executions`, { command: "true", longLived: "yes" });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: "INVALID_OPTION", option: "longLived" } } });
    const held = api(gateway!, "POST", `/v1/sessions/${id}/executions`, {
      command: "sleep 30",
      executionId: "held",
      longLived: true,
    });
    await eventually(() => gateway!.registry.longLivedExecutions === 1, "the long-lived execution to start");
    const refused = await api(gateway!, "POST", `/v1/sessions/${id}/executions`, {
      command: "echo refused",
      longLived: true,
    });
    expect(refused).toMatchObject({ status: 429, body: { error: { code: "TOO_MANY_LONG_LIVED_EXECUTIONS" } } });
    expect(refused.body.error.retryAfterMs).toBeUndefined();
    expect(refused.headers.get("retry-after")).toBeNull();
    // A plain call of the same session is not held back by it.
    expect((await api(gateway!, "POST", `/v1/sessions/${id}/executions`, { command: "echo plain" })).body.output).toBe(
      "plain\n",
    );
    expect((await api(gateway!, "GET", `/v1/sessions/${id}`)).body).toMatchObject({
      runningExecutions: 0,
      longLivedExecutions: 1,
    });
    await api(gateway!, "POST", `/v1/sessions/${id}/executions/held/cancel`, {});
    expect((await held).body.exitCode).toBe(130);
  });
});
