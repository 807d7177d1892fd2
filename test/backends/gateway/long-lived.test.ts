/**
 * The gateway backend's `longLived` executions: sent as such, and, to a
 * gateway older than the field (it refuses unknown fields with a 400 before
 * anything runs), sent again without it, so a PTY still works there. The
 * older gateway is a stand-in: a real gateway behind a proxy that answers
 * such a request as an old one would.
 */

import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createEnvironment, spawn, type Environment, type Gateway } from "../../../src/index.js";
import { ProcessError } from "../../../src/core/errors.js";
import { callTool } from "../../../src/tools/registry.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";
import { startTestGateway, TOKEN } from "../../gateway/helpers.js";
import { eventually } from "../../helpers/processes.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** A proxy to `gateway` that refuses an execution naming `longLived` with the 400 an older gateway gives. */
async function olderGateway(gateway: Gateway): Promise<{ url: string; refused: () => number }> {
  let refused = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (req.method === "POST" && req.url?.endsWith("/executions") && body.includes('"longLived"')) {
        refused++;
        res.writeHead(400, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            error: { code: "INVALID_OPTION", message: 'Unknown execution field "longLived"', option: "longLived" },
          }),
        );
        return;
      }
      const upstream = request(`${gateway.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  cleanups.push(async () => server.closeAllConnections());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, refused: () => refused };
}

describe("gateway backend: long-lived executions", () => {
  skipAllUnless(noStaticHelper);

  it("marks a PTY's follower longLived, and sends it again without the field to a gateway that refuses it", async () => {
    const gateway = await startTestGateway();
    cleanups.push(() => gateway.close());
    const older = await olderGateway(gateway);
    const env: Environment = await createEnvironment({ backend: "gateway", url: older.url, token: TOKEN });
    cleanups.push(() => env.close());
    const started = await callTool(
      "terminal",
      { command: "read -r line; echo got $line", background: true, pty: true },
      { session: env },
    );
    expect(started, JSON.stringify(started)).toMatchObject({ status: "running", pty: true });
    expect(older.refused()).toBe(1);
    // The older gateway counts it as any execution; the PTY works all the same.
    await eventually(() => gateway.registry.runningExecutions === 1, "the follower to run");
    expect(gateway.registry.longLivedExecutions).toBe(0);
    const id = started.session_id as string;
    await callTool("process", { action: "submit", session_id: id, data: "hello" }, { session: env });
    const matched = await callTool(
      "process",
      { action: "wait", session_id: id, pattern: "got hello", timeout: 30 },
      { session: env },
    );
    expect(matched).toMatchObject({ status: "matched" });
    // Asked once: the next PTY is sent without the field straight away.
    await callTool("terminal", { command: "sleep 30", background: true, pty: true }, { session: env });
    expect(older.refused()).toBe(1);
  });

  it("to a current gateway, a PTY's follower is longLived and no call in flight", async () => {
    const gateway = await startTestGateway();
    cleanups.push(() => gateway.close());
    const env = await createEnvironment({ backend: "gateway", url: gateway.url, token: TOKEN });
    cleanups.push(() => env.close());
    await callTool("terminal", { command: "sleep 30", background: true, pty: true }, { session: env });
    await eventually(() => gateway.registry.longLivedExecutions === 1, "the follower to run");
    expect(gateway.registry.runningExecutions).toBe(0);
  });

  it("a spawned process's output stream refused by the gateway's long-lived bound throws, instead of ending empty", async () => {
    const gateway = await startTestGateway({ maxLongLivedPerSession: 1 });
    cleanups.push(() => gateway.close());
    const env = await createEnvironment({ backend: "gateway", url: gateway.url, token: TOKEN });
    cleanups.push(() => env.close());
    const proc = await spawn(env, "echo first; exec sleep 120");
    cleanups.push(() => proc.kill());
    // The first stream's follower takes the session's one long-lived slot.
    const first = proc.output()[Symbol.asyncIterator]();
    expect((await first.next()).value).toBe("first\n");
    const second = proc.output()[Symbol.asyncIterator]();
    const refused = await second.next().then(
      (step) => step,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ProcessError);
    expect((refused as Error).message).toMatch(/Cannot follow the output of proc_\w+: .*maxLongLivedPerSession/);
    await first.return?.();
  });
});
