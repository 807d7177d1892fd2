/**
 * The real `e2b` SDK over real HTTP against `serve --api e2b` on the local
 * backend: its own settings (apiUrl, sandboxUrl) and the gateway token as its
 * API key, nothing else changed.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommandExitError, Sandbox, type SandboxOpts } from "e2b";
import type { Gateway } from "../../../src/index.js";
import { startTestGateway, TOKEN } from "../helpers.js";
import { alive, eventually } from "../../helpers/processes.js";

let gateway: Gateway;
let opts: SandboxOpts;

beforeAll(async () => {
  gateway = await startTestGateway({ apis: ["e2b", "shellwright"], cwd: "/tmp" });
  opts = { apiKey: TOKEN, apiUrl: gateway.url, sandboxUrl: gateway.url, requestTimeoutMs: 30_000 };
});
afterAll(async () => gateway?.close());

describe("control API", () => {
  it("creates, lists, describes, connects, extends and kills a sandbox", async () => {
    const sandbox = await Sandbox.create({ ...opts, metadata: { purpose: "control-test" } });
    expect(gateway.registry.info(sandbox.sandboxId).id).toBe(sandbox.sandboxId);
    const info = await sandbox.getInfo();
    expect(info).toMatchObject({ sandboxId: sandbox.sandboxId, templateId: "base", state: "running" });
    expect(info.metadata).toEqual({ purpose: "control-test" });

    const listed = await Sandbox.list({ ...opts, query: { metadata: { purpose: "control-test" } } }).nextItems();
    expect(listed.map((s) => s.sandboxId)).toEqual([sandbox.sandboxId]);
    const none = await Sandbox.list({ ...opts, query: { metadata: { purpose: "other" } } }).nextItems();
    expect(none).toEqual([]);

    await sandbox.setTimeout(600_000);
    const later = await Sandbox.getInfo(sandbox.sandboxId, opts);
    expect(later.endAt.getTime()).toBeGreaterThan(info.endAt.getTime());

    const again = await Sandbox.connect(sandbox.sandboxId, opts);
    expect((await again.commands.run("echo hi")).stdout).toBe("hi\n");
    expect(await sandbox.isRunning()).toBe(true);

    expect(await Sandbox.kill(sandbox.sandboxId, opts)).toBe(true);
    expect(() => gateway.registry.info(sandbox.sandboxId)).toThrow(/No session/);
    expect(await sandbox.isRunning()).toBe(false);
    expect(await Sandbox.kill(sandbox.sandboxId, opts)).toBe(false);
    await expect(Sandbox.getInfo(sandbox.sandboxId, opts)).rejects.toThrow(/not found/);
  });

  it("kills the sandbox and its processes when its timeout passes", async () => {
    const sandbox = await Sandbox.create({ ...opts, timeoutMs: 2_000 });
    const handle = await sandbox.commands.run("echo $$; exec sleep 300", { background: true });
    await eventually(() => handle.stdout !== "", "the pid");
    const pid = Number(handle.stdout.trim());
    expect(alive(pid)).toBe(true);
    await eventually(() => !alive(pid), "the sleep to end with its sandbox");
    await eventually(() => gateway.registry.list().every((s) => s.id !== sandbox.sandboxId), "the session to close");
    expect(await sandbox.isRunning()).toBe(false);
  });

  it("answers a wrong API key with 401 in E2B's shape", async () => {
    await expect(Sandbox.create({ ...opts, apiKey: "wrong-key-0123456789" })).rejects.toThrow(
      /Unauthorized.*Invalid API key/,
    );
    const res = await fetch(`${gateway.url}/sandboxes`, { headers: { "x-api-key": "nope" } });
    expect(res.status).toBe(401);
    expect((await res.json()) as { code: unknown; message: string }).toEqual({
      code: 401,
      message: expect.stringContaining("X-API-Key"),
    });
  });

  it("names an unknown template and refuses features it does not have", async () => {
    await expect(Sandbox.create("python-3.12", opts)).rejects.toThrow(/Template "python-3.12" not found/);
    const res = await fetch(`${gateway.url}/sandboxes/abc/pause`, { method: "POST", headers: { "x-api-key": TOKEN } });
    expect(res.status).toBe(501);
    expect(((await res.json()) as { code: unknown; message: string }).message).toMatch(
      /Pause and resume is not implemented/,
    );
    await expect(Sandbox.getInfo("no-such-sandbox", opts)).rejects.toThrow(/not found/);
  });
});

describe("commands", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await Sandbox.create({ ...opts, envs: { SANDBOX_VAR: "from-create" } });
  });
  afterAll(async () => sandbox?.kill());

  it("runs in the foreground with stdout and stderr apart", async () => {
    const result = await sandbox.commands.run("echo out; echo err >&2; echo $SANDBOX_VAR");
    expect(result).toMatchObject({ exitCode: 0, stdout: "out\nfrom-create\n", stderr: "err\n" });
  });

  it("throws CommandExitError on a non-zero exit", async () => {
    const error = await sandbox.commands.run("echo failing >&2; exit 3").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommandExitError);
    expect(error).toMatchObject({ exitCode: 3, stderr: "failing\n", error: "exit status 3" });
  });

  it("passes envs and cwd per command, and starts each command fresh by default", async () => {
    const result = await sandbox.commands.run("echo $A-$B; pwd", { envs: { A: "one", B: "two words" }, cwd: "/usr" });
    expect(result.stdout).toBe("one-two words\n/usr\n");
    await sandbox.commands.run("cd /usr; export KEPT=yes");
    expect((await sandbox.commands.run("pwd; echo ${KEPT:-no}; echo ${A:-unset}")).stdout).toBe("/tmp\nno\nunset\n");
  });

  it("runs in the background: list, connect by pid, kill (the process is gone)", async () => {
    const handle = await sandbox.commands.run("echo $$; exec sleep 300", { background: true });
    await eventually(() => handle.stdout !== "", "the pid");
    const osPid = Number(handle.stdout.trim());
    const listed = await sandbox.commands.list();
    expect(listed.map((p) => p.pid)).toContain(handle.pid);
    const again = await sandbox.commands.connect(handle.pid);
    expect(again.pid).toBe(handle.pid);
    expect(await handle.kill()).toBe(true);
    // Gone from the list as soon as the kill returns, not some time after.
    expect((await sandbox.commands.list()).map((p) => p.pid)).not.toContain(handle.pid);
    const error = await handle.wait().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommandExitError);
    expect((error as CommandExitError).error).toBe("signal: killed");
    await eventually(() => !alive(osPid), "the killed process to be gone");
    expect((await sandbox.commands.list()).map((p) => p.pid)).not.toContain(handle.pid);
    expect(await sandbox.commands.kill(handle.pid)).toBe(false);
  });

  it("sends stdin to a process started with stdin", async () => {
    const handle = await sandbox.commands.run("read line; echo got:$line", { background: true, stdin: true });
    await sandbox.commands.sendStdin(handle.pid, "hello\n");
    const result = await handle.wait();
    expect(result.stdout).toContain("got:hello");
  });
});

describe("session mode", () => {
  it("keeps cd and export between commands when metadata asks for it", async () => {
    const sandbox = await Sandbox.create({ ...opts, metadata: { "shellwright:commands": "session" } });
    try {
      await sandbox.commands.run("cd /usr && export KEPT=yes");
      expect((await sandbox.commands.run("pwd; echo $KEPT")).stdout).toBe("/usr\nyes\n");
    } finally {
      await sandbox.kill();
    }
  });

  it("refuses an unknown mode, naming it", async () => {
    await expect(Sandbox.create({ ...opts, metadata: { "shellwright:commands": "sticky" } })).rejects.toThrow(
      /shellwright:commands.*"sticky"/,
    );
  });
});

describe("pty", () => {
  it("creates, takes input, resizes and kills a PTY", async () => {
    const sandbox = await Sandbox.create(opts);
    try {
      let seen = "";
      const decoder = new TextDecoder();
      const pty = await sandbox.pty.create({
        cols: 80,
        rows: 24,
        onData: (data) => void (seen += decoder.decode(data)),
      });
      await sandbox.pty.sendInput(pty.pid, new TextEncoder().encode("echo marker-$((6*7)) pid-$$-end\n"));
      await eventually(() => /marker-42 pid-\d+-end/.test(seen), "the PTY's echo");
      const shellPid = Number(/marker-42 pid-(\d+)-end/.exec(seen)![1]);
      expect(alive(shellPid)).toBe(true);
      await sandbox.pty.resize(pty.pid, { cols: 100, rows: 30 });
      await sandbox.pty.sendInput(pty.pid, new TextEncoder().encode("stty size\n"));
      await eventually(() => /30 100/.test(seen), "the new size");
      // Disconnected, it runs on; a new connection gets what it prints from then on.
      await pty.disconnect();
      let later = "";
      const again = await sandbox.pty.connect(pty.pid, { onData: (data) => void (later += decoder.decode(data)) });
      await sandbox.pty.sendInput(pty.pid, new TextEncoder().encode("echo again-$((1+1))\n"));
      await eventually(() => /again-2/.test(later), "output on the new connection");
      expect(again.pid).toBe(pty.pid);
      expect(await sandbox.pty.kill(pty.pid)).toBe(true);
      await pty.wait().catch(() => undefined);
      await eventually(() => !alive(shellPid), "the PTY's shell to be gone");
      expect((await sandbox.commands.list()).map((p) => p.pid)).not.toContain(pty.pid);
    } finally {
      await sandbox.kill();
    }
  });
});

describe("envd access", () => {
  it("refuses another sandbox's access token, an unknown sandbox and a malformed body", async () => {
    const a = await Sandbox.create(opts);
    const b = await Sandbox.create(opts);
    try {
      const call = (id: string, token: string, body: string) =>
        fetch(`${gateway.url}/process.Process/List`, {
          method: "POST",
          headers: { "content-type": "application/json", "e2b-sandbox-id": id, "x-access-token": token },
          body,
        });
      const own = await call(a.sandboxId, (a as unknown as { envdAccessToken: string }).envdAccessToken, "{}");
      expect(own.status).toBe(200);
      const other = await call(a.sandboxId, (b as unknown as { envdAccessToken: string }).envdAccessToken, "{}");
      expect(other.status).toBe(401);
      expect(((await other.json()) as { code: unknown; message: string }).code).toBe("unauthenticated");
      const unknown = await call("nope", "x", "{}");
      expect(unknown.status).toBe(502);
      const malformed = await call(
        a.sandboxId,
        (a as unknown as { envdAccessToken: string }).envdAccessToken,
        "{not json",
      );
      expect(malformed.status).toBe(400);
      expect(((await malformed.json()) as { code: unknown; message: string }).code).toBe("invalid_argument");
    } finally {
      await a.kill();
      await b.kill();
    }
  });
});
