/**
 * E2B's fork and snapshots on serve (docs/e2b.md): refused by name where the
 * backend's fork would share files, bad input answered before anything is
 * made, and on a docker-backed serve the copies independent, with nothing
 * of theirs left once they are killed, deleted or the server stops.
 */

import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox, type SandboxOpts } from "e2b";
import type { Gateway } from "../../../src/index.js";
import { FORK_LABEL } from "../../../src/backends/docker/checkpoint-fork.js";
import { DOCKER_TEST_ENABLED } from "../../helpers/docker-test.js";
import { E2B_DOCKER_IMAGE } from "../../vendor/e2b/tests/skips.js";
import { startTestGateway, TOKEN } from "../helpers.js";
import { eventually } from "../../helpers/processes.js";

function sdkOpts(gateway: Gateway): SandboxOpts {
  return { apiKey: TOKEN, apiUrl: gateway.url, sandboxUrl: gateway.url, requestTimeoutMs: 60_000 };
}

async function control(gateway: Gateway, method: string, path: string, body?: unknown) {
  const res = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { "x-api-key": TOKEN, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

describe("fork and snapshots on a local-backed serve", () => {
  let gateway: Gateway;
  let sandbox: Sandbox;
  beforeAll(async () => {
    gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp" });
    sandbox = await Sandbox.create(sdkOpts(gateway));
  });
  afterAll(async () => gateway?.close());

  it("checks a fork's body first, naming the field and the value", async () => {
    for (const [body, field] of [
      [{ count: 0 }, "count"],
      [{ count: 101 }, "count"],
      [{ count: "2" }, "count"],
      [{ count: 1.5 }, "count"],
      [{ timeout: -1 }, "timeout"],
    ] as const) {
      // An unknown sandbox too: the body is checked before the sandbox is looked up, as E2B does.
      for (const id of [sandbox.sandboxId, "no-such-sandbox"]) {
        const res = await control(gateway, "POST", `/sandboxes/${id}/fork`, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(String(res.body?.message), JSON.stringify(body)).toContain(field);
      }
    }
    await expect(Sandbox.fork(sandbox.sandboxId, { ...sdkOpts(gateway), count: 0 })).rejects.toThrow(/count/);
    expect(gateway.registry.size).toBe(1);
  });

  it("refuses a fork and a snapshot with 501 where a fork would share the sandbox's files, and makes nothing", async () => {
    await expect(sandbox.fork()).rejects.toThrow(/fork on the local backend .*share/);
    await expect(sandbox.createSnapshot()).rejects.toThrow(/Snapshots on the local backend/);
    const res = await control(gateway, "POST", `/sandboxes/${sandbox.sandboxId}/fork`, {});
    expect(res.status).toBe(501);
    expect(gateway.registry.size).toBe(1);
    expect((await control(gateway, "GET", "/snapshots")).body).toEqual([]);
  });

  it("answers an unknown sandbox with 404, an unknown snapshot's delete with 404 (the SDK's false)", async () => {
    await expect(Sandbox.fork("no-such-sandbox", sdkOpts(gateway))).rejects.toThrow(/not found/);
    expect((await control(gateway, "POST", "/sandboxes/no-such-sandbox/snapshots", {})).status).toBe(404);
    expect(await Sandbox.deleteSnapshot("abc:default", sdkOpts(gateway))).toBe(false);
    // What the templates API would do besides is not served, and says so.
    expect((await control(gateway, "GET", "/templates")).status).toBe(501);
    expect((await control(gateway, "GET", "/snapshots/abc")).status).toBe(501);
    const page = await control(gateway, "GET", "/snapshots?limit=0");
    expect(page.status).toBe(400);
    expect(String(page.body?.message)).toContain("limit");
  });
});

function containers(label: string): string[] {
  const out = execFileSync("docker", ["ps", "-aq", "--filter", `label=${label}`], { encoding: "utf8" }).trim();
  return out === "" ? [] : out.split("\n");
}

describe.skipIf(!DOCKER_TEST_ENABLED)("fork and snapshots on a docker-backed serve", () => {
  let gateway: Gateway;
  let opts: SandboxOpts;
  beforeAll(async () => {
    gateway = await startTestGateway({
      apis: ["e2b"],
      cwd: "/home/user",
      backend: { backend: "docker", image: E2B_DOCKER_IMAGE },
    });
    opts = sdkOpts(gateway);
  });
  afterAll(async () => gateway?.close());

  it("gives forks the parent's files and state, apart from it and each other, with the timeout asked", async () => {
    const parent = await Sandbox.create({ ...opts, envs: { FROM_CREATE: "kept" } });
    await parent.files.write("/home/user/shared.txt", "before");
    const forks = await parent.fork({ count: 2, timeoutMs: 40_000 });
    const [a, b] = forks as Sandbox[];
    expect(a).toBeInstanceOf(Sandbox);
    expect(b).toBeInstanceOf(Sandbox);
    await a!.files.write("/home/user/shared.txt", "a's");
    expect(await b!.files.read("/home/user/shared.txt")).toBe("before");
    expect(await parent.files.read("/home/user/shared.txt")).toBe("before");
    expect((await b!.commands.run("echo $FROM_CREATE; pwd")).stdout).toBe("kept\n/home/user\n");
    // A fork's life is its own: the timeout asked for, from the fork on.
    const info = await Sandbox.getInfo(a!.sandboxId, opts);
    const leftS = (info.endAt.getTime() - Date.now()) / 1000;
    expect(leftS).toBeGreaterThan(20);
    expect(leftS).toBeLessThanOrEqual(40);
    await a!.kill();
    expect(await a!.isRunning()).toBe(false);
    expect(await parent.isRunning()).toBe(true);
    expect(await b!.isRunning()).toBe(true);
    await Promise.all([b!.kill(), parent.kill()]);
  });

  it("refuses a fork while a command of a session sandbox runs (409), and makes nothing", async () => {
    const sandbox = await Sandbox.create({ ...opts, metadata: { "shellwright:commands": "session" } });
    const running = await sandbox.commands.run("sleep 30", { background: true });
    const before = gateway.registry.size;
    await expect(sandbox.fork()).rejects.toThrow(/while a command of the session runs/);
    expect(gateway.registry.size).toBe(before);
    await running.kill();
    await sandbox.kill();
  });

  it("waits for a short command of a session sandbox to end rather than refusing the fork at once", async () => {
    // serve's own short calls in a session (a stdin written into a process's FIFO) count as running commands too:
    // a fork beside them was refused at random.
    const sandbox = await Sandbox.create({ ...opts, metadata: { "shellwright:commands": "session" } });
    await sandbox.commands.run("sleep 1 && echo done > ~/ended", { background: true });
    const [child] = await sandbox.fork();
    expect(child).toBeInstanceOf(Sandbox);
    // The fork came after the command's end: the copy has what it wrote.
    expect((await (child as Sandbox).commands.run("cat ~/ended")).stdout).toBe("done\n");
    await Promise.all([(child as Sandbox).kill(), sandbox.kill()]);
  });

  it("keeps a snapshot after its sandbox is gone; a sandbox from it gets the envVars asked for besides", async () => {
    const sandbox = await Sandbox.create(opts);
    await sandbox.files.write("/home/user/app.txt", "snapshotted");
    const snapshot = await sandbox.createSnapshot({ name: "fork-test-app" });
    expect(snapshot).toEqual({ snapshotId: "fork-test-app:default", names: ["fork-test-app:default"] });
    await sandbox.kill();
    const made = await Sandbox.create("fork-test-app", { ...opts, envs: { ADDED: 'it\'s "quoted" $HOME' } });
    expect(await made.files.read("/home/user/app.txt")).toBe("snapshotted");
    expect((await made.commands.run('printf %s "$ADDED"')).stdout).toBe('it\'s "quoted" $HOME');
    expect((await Sandbox.list(opts).nextItems()).map((s) => s.templateId)).toContain("fork-test-app:default");
    await made.kill();
    // A second snapshot under the same name takes it over; the first one's session goes.
    const again = await Sandbox.create(opts);
    await again.files.write("/home/user/app.txt", "second");
    await again.createSnapshot({ name: "fork-test-app" });
    const listed = await Sandbox.listSnapshots({ ...opts, name: "fork-test-app" }).nextItems();
    expect(listed).toHaveLength(1);
    const second = await Sandbox.create("fork-test-app:default", opts);
    expect(await second.files.read("/home/user/app.txt")).toBe("second");
    await Promise.all([second.kill(), again.kill()]);
    expect(await Sandbox.deleteSnapshot("fork-test-app", opts)).toBe(true);
    await expect(Sandbox.create("fork-test-app", opts)).rejects.toThrow(/not found/);
  });

  it("two snapshots of one name taken at once leave one, and the other's session is closed", async () => {
    const sandbox = await Sandbox.create(opts);
    const taken = await Promise.all([
      sandbox.createSnapshot({ name: "fork-test-race" }),
      sandbox.createSnapshot({ name: "fork-test-race" }),
    ]);
    expect(taken.map((s) => s.snapshotId)).toEqual(["fork-test-race:default", "fork-test-race:default"]);
    expect(await Sandbox.listSnapshots({ ...opts, name: "fork-test-race" }).nextItems()).toHaveLength(1);
    // Each snapshot is a container forked from the sandbox's: only the one held is left.
    await eventually(() => containers(`${FORK_LABEL}=${sandbox.sandboxId}`).length === 1, "one snapshot container");
    expect(await Sandbox.deleteSnapshot("fork-test-race", opts)).toBe(true);
    await eventually(() => containers(`${FORK_LABEL}=${sandbox.sandboxId}`).length === 0, "no snapshot container");
    await sandbox.kill();
  });

  it("refuses a bad snapshot name, naming it", async () => {
    const sandbox = await Sandbox.create(opts);
    for (const name of ["base", "Has Space", "-dash", "x".repeat(129)])
      await expect(sandbox.createSnapshot({ name })).rejects.toThrow(/name must be/);
    await sandbox.kill();
  });

  it("leaves no container behind once the server stops, snapshots and forks included", async () => {
    const own = await startTestGateway({
      apis: ["e2b"],
      cwd: "/home/user",
      backend: { backend: "docker", image: E2B_DOCKER_IMAGE },
    });
    const ownOpts = sdkOpts(own);
    const sandbox = await Sandbox.create(ownOpts);
    // A container's hostname is its id's first 12 digits.
    const parent = (await sandbox.commands.run("hostname")).stdout.trim();
    await sandbox.createSnapshot();
    await sandbox.fork({ count: 1 });
    const children = containers(`${FORK_LABEL}=${sandbox.sandboxId}`);
    expect(children).toHaveLength(2); // the snapshot's and the fork's
    expect(containers("shellwright=1").some((id) => id.startsWith(parent))).toBe(true);
    await own.close();
    expect(containers(`${FORK_LABEL}=${sandbox.sandboxId}`)).toEqual([]);
    expect(containers("shellwright=1").filter((id) => id.startsWith(parent))).toEqual([]);
  });
});
