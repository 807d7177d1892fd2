/**
 * Checkpoints, rollback and fork of gateway sessions (docs/branching.md):
 * the server's session does them on its backend (local with a workspace
 * here), the gateway client names them, over real loopback HTTP.
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckpointError, createEnvironment, type Environment, type Gateway } from "../../src/index.js";
import { api, scratchDir, startTestGateway, TOKEN } from "./helpers.js";
import { FakeModalClient } from "../fakes/fake-modal.js";
import { PrivateTmp } from "../fakes/private-tmp.js";
import { skipAllUnless } from "../helpers/native-helper.js";
import { runOk } from "../helpers/session.js";

const scratch = scratchDir();
const root = join(scratch.path, "ws");
let gateway: Gateway;

beforeAll(async () => {
  mkdirSync(root);
  writeFileSync(join(root, "a.txt"), "one\n");
  // The sessions start in the workspace (the gateway's cwd); a request may name no other root.
  gateway = await startTestGateway({
    backend: { backend: "local", workspace: root },
    cwd: root,
    allowedRoots: [root],
    maxSessions: 4,
  });
});
afterAll(async () => {
  await gateway?.close();
  scratch.remove();
});

const connect = (): Promise<Environment> => createEnvironment({ backend: "gateway", url: gateway.url, token: TOKEN });
const sessionIds = async (): Promise<string[]> =>
  ((await api(gateway, "GET", "/v1/sessions")).body.sessions as { id: string }[]).map((session) => session.id);

describe("gateway checkpoints", () => {
  it("rolls the server's workspace and shell state back, and lists and releases on both sides", async () => {
    const env = await connect();
    try {
      expect(env.workspaceRoot).toBe(root);
      await env.execute("export STEP=1 && mkdir -p sub");
      const cp = await env.checkpoint();
      expect(cp.holds.workspace).toEqual({ root, bytes: expect.any(Number) });
      await env.execute("echo two > a.txt && touch b.txt && cd sub && export STEP=2");
      expect(env.cwd).toBe(join(root, "sub"));
      await env.rollback(cp);
      expect(env.cwd).toBe(root);
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one\n");
      expect(existsSync(join(root, "b.txt"))).toBe(false);
      expect((await env.execute('echo "$STEP"; pwd')).output).toBe(`1\n${root}\n`);

      const listed = await api(gateway, "GET", `/v1/sessions/${env.id}/checkpoints`);
      expect(listed.body.checkpoints).toHaveLength(1);
      expect(env.checkpoints()).toEqual([cp]);
      await env.releaseCheckpoint(cp);
      expect((await api(gateway, "GET", `/v1/sessions/${env.id}/checkpoints`)).body).toEqual({ checkpoints: [] });
      await expect(env.rollback(cp)).rejects.toMatchObject({ reason: "not_found" });
    } finally {
      await env.close();
    }
  });

  it("forks into sessions of the gateway that go their own ways and outlive the parent", async () => {
    const parent = await connect();
    const children = await parent.fork({ count: 2 });
    try {
      expect(children.map((child) => child.backend)).toEqual(["gateway", "gateway"]);
      expect(new Set([parent.id, ...children.map((child) => child.id)]).size).toBe(3);
      expect(await sessionIds()).toEqual(expect.arrayContaining(children.map((child) => child.id)));
      await children[0]!.execute("export WHO=first && echo first > mine.txt");
      expect((await children[1]!.execute('echo "[$WHO]"; cat mine.txt 2>&1 || echo none')).output).toMatch(
        /^\[\]\n.*\nnone\n$/s,
      );
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one\n");
      expect(existsSync(join(root, "mine.txt"))).toBe(false);
      await parent.close();
      expect((await children[0]!.execute('echo "$WHO"')).output).toBe("first\n");
    } finally {
      await parent.close();
      for (const child of children) await child.close();
    }
    expect(await sessionIds()).toEqual([]);
  });

  it("refuses with the reason, changing nothing: a checkpoint beside a command, a fork past maxSessions, bad fields", async () => {
    const env = await connect();
    try {
      const stop = new AbortController();
      const running = env.execute("sleep 600", { signal: stop.signal });
      await expect
        .poll(async () => (await api(gateway, "GET", `/v1/sessions/${env.id}`)).body.runningExecutions)
        .toBe(1);
      // Through the API, as another client of the same session would: the server's session refuses.
      const busy = await api(gateway, "POST", `/v1/sessions/${env.id}/checkpoints`);
      expect(busy.body.error).toMatchObject({ code: "CHECKPOINT_FAILED", reason: "busy" });
      await expect(env.checkpoint()).rejects.toBeInstanceOf(CheckpointError);
      stop.abort();
      await running;

      const tooMany = await api(gateway, "POST", `/v1/sessions/${env.id}/fork`, { count: 4 });
      expect([tooMany.status, tooMany.body.error.code]).toEqual([429, "TOO_MANY_SESSIONS"]);
      expect(await sessionIds()).toEqual([env.id]);
      const zero = await api(gateway, "POST", `/v1/sessions/${env.id}/fork`, { count: 0 });
      expect([zero.status, zero.body.error.option]).toEqual([400, "count"]);
      const stray = await api(gateway, "POST", `/v1/sessions/${env.id}/checkpoints`, { label: "x" });
      expect([stray.status, stray.body.error.option]).toEqual([400, "label"]);
      const unknown = await api(gateway, "POST", `/v1/sessions/${env.id}/checkpoints/cp-000000000000/rollback`);
      expect([unknown.status, unknown.body.error.reason]).toEqual([404, "not_found"]);
      expect((await api(gateway, "GET", `/v1/sessions/${env.id}/checkpoints`)).body).toEqual({ checkpoints: [] });
    } finally {
      await env.close();
    }
  });
});

describe("gateway checkpoints over a backend that snapshots its sandbox", () => {
  skipAllUnless(PrivateTmp.unavailable());

  it("says the server's checkpoint holds the sandbox's filesystem, and rolls its files back", async () => {
    // The server's backend is Modal's FAKE client (test/fakes/): the cloud cannot be reached from here.
    const client = new FakeModalClient({ privateTmp: true });
    const server = await startTestGateway({ backend: { backend: "modal", client } });
    const env = await createEnvironment({ backend: "gateway", url: server.url, token: TOKEN });
    try {
      await runOk(env, "echo one > /tmp/kept");
      const cp = await env.checkpoint();
      expect(cp.holds).toEqual({ shell: true, filesystem: { snapshot: expect.stringMatching(/^im-/) } });
      const listed = await api(server, "GET", `/v1/sessions/${env.id}/checkpoints`);
      expect(listed.body.checkpoints[0].holds).toEqual(cp.holds);
      await runOk(env, "echo two > /tmp/kept; touch /tmp/later");
      await env.rollback(cp);
      expect(await runOk(env, "cat /tmp/kept; [ -e /tmp/later ] && echo there || echo gone")).toBe("one\ngone");
    } finally {
      await env.close();
      await server.close();
    }
  });
});
