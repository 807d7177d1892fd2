/**
 * Trying to break serve --api e2b through the real SDK and raw Connect calls:
 * a process that ignores SIGTERM, a command past its timeout, a sandbox
 * killed under a running command, tags, StreamInput, bad selectors.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox, type SandboxOpts } from "e2b";
import { createClient, ConnectError, Code } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import type { Gateway } from "../../../src/index.js";
import { Process, Signal } from "../../../src/gateway/e2b/gen/process/process_pb.js";
import { startTestGateway, TOKEN } from "../helpers.js";
import { alive, eventually } from "../../helpers/processes.js";

let gateway: Gateway;
let opts: SandboxOpts;
let sandbox: Sandbox;

beforeAll(async () => {
  gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp" });
  opts = { apiKey: TOKEN, apiUrl: gateway.url, sandboxUrl: gateway.url, requestTimeoutMs: 30_000 };
  sandbox = await Sandbox.create(opts);
});
afterAll(async () => gateway?.close());

/** A raw Connect client for this sandbox's process service, as the SDK's own transport is built. */
function rawClient(box: Sandbox) {
  const token = (box as unknown as { envdAccessToken: string }).envdAccessToken;
  const transport = createConnectTransport({
    baseUrl: gateway.url,
    httpVersion: "1.1",
    interceptors: [
      (next) => (req) => {
        req.header.set("e2b-sandbox-id", box.sandboxId);
        req.header.set("x-access-token", token);
        return next(req);
      },
    ],
  });
  return createClient(Process, transport);
}

describe("killing", () => {
  it("kills a process that ignores SIGTERM, by SIGTERM then SIGKILL", async () => {
    const handle = await sandbox.commands.run(`trap '' TERM; echo $$; while :; do sleep 1; done`, { background: true });
    await eventually(() => handle.stdout !== "", "the pid");
    const pid = Number(handle.stdout.trim());
    const client = rawClient(sandbox);
    await client.sendSignal({ process: { selector: { case: "pid", value: handle.pid } }, signal: Signal.SIGTERM });
    await eventually(() => !alive(pid), "the TERM-ignoring shell to be gone");
    const error = await handle.wait().catch((e: unknown) => e);
    expect((error as { error?: string }).error).toBe("signal: terminated");
  });

  it("kills a TERM-ignoring process started with stdin (a background process of the session)", async () => {
    const handle = await sandbox.commands.run(`trap '' TERM; echo $BASHPID; cat`, { background: true, stdin: true });
    await eventually(() => handle.stdout !== "", "the pid");
    const pid = Number(handle.stdout.trim());
    expect(alive(pid)).toBe(true);
    expect(await handle.kill()).toBe(true);
    await eventually(() => !alive(pid), "the TERM-ignoring shell to be gone");
    const error = await handle.wait().catch((e: unknown) => e);
    expect((error as { error?: string }).error).toBe("signal: killed");
  });

  it("ends a process started with stdin by SIGTERM alone, reported as envd does", async () => {
    const handle = await sandbox.commands.run(`echo $BASHPID; exec sleep 300`, { background: true, stdin: true });
    await eventually(() => handle.stdout !== "", "the pid");
    const pid = Number(handle.stdout.trim());
    await rawClient(sandbox).sendSignal({
      process: { selector: { case: "pid", value: handle.pid } },
      signal: Signal.SIGTERM,
    });
    const error = await handle.wait().catch((e: unknown) => e);
    expect((error as { error?: string }).error).toBe("signal: terminated");
    expect(alive(pid)).toBe(false);
    // Its stdin is gone with it: a clear refusal, not an internal error.
    const write = await sandbox.commands.sendStdin(handle.pid, "late").catch((e: unknown) => e);
    expect(write).toBeInstanceOf(Error);
    expect((write as Error).message).not.toContain("internal");
  });

  it("kills a command when its timeoutMs passes", async () => {
    let out = "";
    const run = sandbox.commands.run("echo $$; exec sleep 300", { timeoutMs: 1500, onStdout: (d) => void (out += d) });
    await expect(run).rejects.toThrow();
    const pid = Number(out.trim());
    expect(pid).toBeGreaterThan(1);
    await eventually(() => !alive(pid), "the timed-out sleep to be gone");
  });

  it("ends a foreground command when its sandbox is killed under it", async () => {
    const box = await Sandbox.create(opts);
    let out = "";
    const run = box.commands
      .run("echo $$; exec sleep 300", { onStdout: (d) => void (out += d) })
      .catch((e: unknown) => e);
    await eventually(() => out !== "", "the pid");
    await box.kill();
    expect(await run).toBeInstanceOf(Error);
    await eventually(() => !alive(Number(out.trim())), "the sleep to end with its sandbox");
  });
  it("ends a setsid-detached child when its sandbox ends", async () => {
    const box = await Sandbox.create(opts);
    const started = await box.commands.run("setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $!");
    const pid = Number(started.stdout.trim());
    try {
      expect(alive(pid)).toBe(true);
      await box.kill();
      await eventually(() => !alive(pid), "the detached sleep to end with its sandbox");
    } finally {
      if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  });
});

describe("control API input", () => {
  const call = (method: string, path: string, body?: string) =>
    fetch(`${gateway.url}${path}`, {
      method,
      headers: { "x-api-key": TOKEN, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body }),
    });

  it("answers malformed ids and bodies with 400s that name the problem", async () => {
    const badId = await call("GET", "/sandboxes/%ZZ");
    expect(badId.status).toBe(400);
    expect(((await badId.json()) as { message: string }).message).toMatch(/malformed percent-encoding/);
    const notJson = await call("POST", "/v2/sandboxes", "{nope");
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { code: number }).code).toBe(400);
    for (const [body, field] of [
      ['{"timeout": -1}', "timeout"],
      ['{"timeout": "300"}', "timeout"],
      ['{"envVars": {"A": 1}}', 'envVars["A"]'],
      ['{"metadata": []}', "metadata"],
      ['{"templateID": 7}', "templateID"],
    ] as const) {
      const res = await call("POST", "/v2/sandboxes", body);
      expect(res.status, body).toBe(400);
      expect(((await res.json()) as { message: string }).message, body).toContain(field);
    }
    expect(gateway.registry.size).toBe(1);
  });

  it("refuses what it cannot honour at create, by name, and creates nothing", async () => {
    for (const [body, feature] of [
      ['{"autoPause": true}', "autoPause"],
      ['{"allow_internet_access": false}', "allow_internet_access"],
      ['{"network": {"denyOut": ["0.0.0.0/0"]}}', "network"],
      ['{"volumeMounts": [{"name": "v", "path": "/data"}]}', "volumeMounts"],
    ] as const) {
      const res = await call("POST", "/v2/sandboxes", body);
      expect(res.status, body).toBe(501);
      expect(((await res.json()) as { message: string }).message, body).toContain(feature);
    }
    expect(gateway.registry.size).toBe(1);
  });

  it("keeps concurrent commands' outputs apart", async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        sandbox.commands.run(`echo out-${i}; echo err-${i} >&2; exit ${i % 2}`).catch((e: unknown) => e),
      ),
    );
    results.forEach((result, i) => {
      expect(result).toMatchObject({ exitCode: i % 2, stdout: `out-${i}\n`, stderr: `err-${i}\n` });
    });
  });
});

describe("raw Connect calls", () => {
  it("starts by tag, connects by tag, refuses a second process with the same tag", async () => {
    const client = rawClient(sandbox);
    const stream = client.start({ process: { cmd: "/bin/bash", args: ["-c", "sleep 300"] }, tag: "svc" });
    const first = await stream[Symbol.asyncIterator]().next();
    expect(first.value?.event?.event.case).toBe("start");
    const listed = await client.list({});
    expect(listed.processes.find((p) => p.tag === "svc")?.config?.args).toEqual(["-c", "sleep 300"]);
    const again = client.start({ process: { cmd: "/bin/bash", args: ["-c", "true"] }, tag: "svc" });
    await expect(again[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: Code.AlreadyExists });
    const connected = client.connect({ process: { selector: { case: "tag", value: "svc" } } });
    const start = await connected[Symbol.asyncIterator]().next();
    expect(start.value?.event?.event).toMatchObject({ case: "start" });
    await client.sendSignal({ process: { selector: { case: "tag", value: "svc" } }, signal: Signal.SIGKILL });
    const ends = [];
    for await (const message of connected) ends.push(message.event?.event.case);
    expect(ends).toContain("end");
  });

  it("takes stdin through StreamInput and CloseStdin", async () => {
    const client = rawClient(sandbox);
    const stream = client.start({ process: { cmd: "/bin/bash", args: ["-c", "cat; echo done"] }, stdin: true });
    const iterator = stream[Symbol.asyncIterator]();
    const start = await iterator.next();
    const pid = (start.value?.event?.event.value as { pid: number }).pid;
    async function* inputs() {
      yield {
        event: { case: "start" as const, value: { process: { selector: { case: "pid" as const, value: pid } } } },
      };
      yield {
        event: {
          case: "data" as const,
          value: { input: { input: { case: "stdin" as const, value: new TextEncoder().encode("streamed\n") } } },
        },
      };
    }
    await client.streamInput(inputs());
    await client.closeStdin({ process: { selector: { case: "pid", value: pid } } });
    let text = "";
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      const event = next.value.event?.event;
      if (event?.case === "data") text += new TextDecoder().decode(event.value.output.value as Uint8Array);
      if (event?.case === "end") {
        expect(event.value).toMatchObject({ exitCode: 0, exited: true, status: "exit status 0" });
        break;
      }
    }
    expect(text).toBe("streamed\ndone\n");
  });

  it("names what is wrong: an unknown pid, an empty selector, a PTY resize of a plain process, an unspecified signal", async () => {
    const client = rawClient(sandbox);
    const notFound = await client
      .sendSignal({ process: { selector: { case: "pid", value: 999_999 } }, signal: Signal.SIGKILL })
      .catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(ConnectError);
    expect(notFound).toMatchObject({ code: Code.NotFound, rawMessage: expect.stringContaining("999999") });
    await expect(client.closeStdin({ process: {} })).rejects.toMatchObject({ code: Code.InvalidArgument });
    const handle = await sandbox.commands.run("sleep 300", { background: true });
    await expect(
      client.update({
        process: { selector: { case: "pid", value: handle.pid } },
        pty: { size: { cols: 10, rows: 10 } },
      }),
    ).rejects.toMatchObject({ code: Code.FailedPrecondition, rawMessage: expect.stringContaining("no PTY") });
    await expect(
      client.sendSignal({ process: { selector: { case: "pid", value: handle.pid } }, signal: Signal.UNSPECIFIED }),
    ).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(
      client.sendInput({
        process: { selector: { case: "pid", value: handle.pid } },
        input: { input: { case: "stdin", value: new Uint8Array([1]) } },
      }),
    ).rejects.toMatchObject({
      code: Code.FailedPrecondition,
    });
    await handle.kill();
    await expect(client.start({})[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: Code.InvalidArgument });
    const badName = client.start({ process: { cmd: "/bin/bash", args: ["-c", "true"], envs: { "BAD NAME": "x" } } });
    await expect(badName[Symbol.asyncIterator]().next()).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringContaining("BAD NAME"),
    });
  });

  it("names an envd method it does not serve", async () => {
    const token = (sandbox as unknown as { envdAccessToken: string }).envdAccessToken;
    const res = await fetch(`${gateway.url}/process.Process/Teleport`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-access-token": token, "e2b-sandbox-id": sandbox.sandboxId },
      body: "{}",
    });
    expect(res.status).toBe(501);
    expect(await res.json()).toEqual({
      code: "unimplemented",
      message: expect.stringContaining("/process.Process/Teleport is not implemented"),
    });
  });

  it("refuses a request without E2b-Sandbox-Id or with another sandbox's id and this one's token", async () => {
    const other = await Sandbox.create(opts);
    try {
      const token = (sandbox as unknown as { envdAccessToken: string }).envdAccessToken;
      const res = await fetch(`${gateway.url}/process.Process/List`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-access-token": token },
        body: "{}",
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: unknown; message: string }).message).toMatch(/E2b-Sandbox-Id/);
      const crossed = await fetch(`${gateway.url}/process.Process/List`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-access-token": token, "e2b-sandbox-id": other.sandboxId },
        body: "{}",
      });
      expect(crossed.status).toBe(401);
    } finally {
      await other.kill();
    }
  });
});
