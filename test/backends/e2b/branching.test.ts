/**
 * The e2b backend's checkpoints and fork of the whole sandbox, through E2B's own snapshots and fork
 * (docs/branching.md), against a docker-backed `serve --api e2b`, where each is a `docker commit` of the
 * sandbox's container; and on a local-backed serve, which has neither, the error that says what to set.
 */

import { Sandbox } from "e2b";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CheckpointError,
  createEnvironment,
  InvalidOptionError,
  type Environment,
  type Gateway,
} from "../../../src/index.js";
import { DOCKER_TEST_ENABLED } from "../../helpers/docker-test.js";
import { E2B_DOCKER_IMAGE } from "../../vendor/e2b/tests/skips.js";
import { startTestGateway, TOKEN } from "../../gateway/helpers.js";
import { runOk as run } from "../../helpers/session.js";

const opened: Environment[] = [];

async function openOn(gateway: Gateway, config: Record<string, unknown> = {}): Promise<Environment> {
  const env = await createEnvironment({
    backend: "e2b",
    apiKey: TOKEN,
    apiUrl: gateway.url,
    sandboxUrl: gateway.url,
    ...config,
  } as never);
  opened.push(env);
  return env;
}

async function snapshotsOn(gateway: Gateway): Promise<string[]> {
  const opts = { apiKey: TOKEN, apiUrl: gateway.url, sandboxUrl: gateway.url };
  return (await Sandbox.listSnapshots(opts).nextItems()).map((snapshot) => snapshot.snapshotId);
}

describe.skipIf(!DOCKER_TEST_ENABLED)("e2b checkpoints and fork of the whole sandbox (docker-backed serve)", () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startTestGateway({
      apis: ["e2b"],
      cwd: "/home/user",
      backend: { backend: "docker", image: E2B_DOCKER_IMAGE },
    });
  });
  afterAll(async () => {
    await Promise.allSettled(opened.splice(0).map((env) => env.close()));
    await gateway?.close();
  });

  it.each([true, false])(
    "a rollback brings back every file and the shell state, in a new sandbox (fastPath %s)",
    async (fastPath) => {
      const env = await openOn(gateway, { fastPath });
      await run(env, "mkdir -p ~/w && echo one > ~/w/kept && echo gone > ~/w/removed && export STAGE=saved && cd ~/w");
      const held = (await snapshotsOn(gateway)).length;
      const checkpoint = await env.checkpoint();
      expect(await snapshotsOn(gateway)).toHaveLength(held + 1);
      await run(env, "echo two > kept && rm removed && echo new > added && export STAGE=later && cd /");
      const before = gateway.registry.size;
      await env.rollback(checkpoint);
      expect(await run(env, 'echo "$STAGE $(pwd)"; cat kept removed; ls')).toBe(
        `saved ${await run(env, "echo ~")}/w\none\ngone\nkept\nremoved`,
      );
      // The sandbox it left was killed: as many sandboxes as before.
      expect(gateway.registry.size).toBe(before);
      // Still usable, a stdin through the new sandbox's own private directory too.
      expect((await env.execute("cat", { stdin: "through" })).output).toBe("through");
      await env.releaseCheckpoint(checkpoint);
      expect(await snapshotsOn(gateway)).toHaveLength(held);
      await env.close();
    },
  );

  it("a fork's children start from the parent's files and state, each independent, each gone at its close", async () => {
    const env = await openOn(gateway);
    await run(env, "echo parent > ~/shared && export WHO=parent && cd /tmp");
    const before = gateway.registry.size;
    const children = await env.fork({ count: 2 });
    opened.push(...children);
    expect(gateway.registry.size).toBe(before + 2);
    for (const [i, child] of children.entries()) {
      expect(await run(child, 'echo "$WHO $(pwd) $(cat ~/shared)"')).toBe("parent /tmp parent");
      await run(child, `echo child${i} > ~/shared && export WHO=child${i}`);
    }
    await run(env, "echo parent-later > ~/shared");
    expect(await run(children[0]!, "echo $WHO; cat ~/shared")).toBe("child0\nchild0");
    expect(await run(children[1]!, "echo $WHO; cat ~/shared")).toBe("child1\nchild1");
    expect(await run(env, "echo $WHO; cat ~/shared")).toBe("parent\nparent-later");
    // The parent's close leaves the children working; a child's close kills its sandbox.
    await env.close();
    expect(await run(children[0]!, "echo still")).toBe("still");
    await children[0]!.close();
    expect(gateway.registry.size).toBe(before);
    await children[1]!.close();
    expect(gateway.registry.size).toBe(before - 1);
  });

  it("a session's close deletes the snapshots its checkpoints still hold", async () => {
    const env = await openOn(gateway);
    const held = (await snapshotsOn(gateway)).length;
    await env.checkpoint();
    await run(env, "echo between > ~/f");
    await env.checkpoint();
    expect(await snapshotsOn(gateway)).toHaveLength(held + 2);
    await env.close();
    expect(await snapshotsOn(gateway)).toHaveLength(held);
  });
});

describe("e2b checkpoints on a platform without E2B's snapshots and fork (local-backed serve)", () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp" });
  });
  afterAll(async () => {
    await Promise.allSettled(opened.splice(0).map((env) => env.close()));
    await gateway?.close();
  });

  it('refuses a checkpoint and a fork of the whole sandbox, saying to set checkpoints: "shell"; the session goes on', async () => {
    const env = await openOn(gateway);
    await run(env, "export KEPT=1");
    for (const attempt of [() => env.checkpoint(), () => env.fork({ count: 1 })]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointError);
      expect((error as Error).message).toMatch(/501.*set checkpoints: "shell"/);
    }
    expect(env.checkpoints()).toEqual([]);
    expect(await run(env, "echo $KEPT")).toBe("1");
  });

  it('with checkpoints: "shell", keeps the shell state only', async () => {
    const env = await openOn(gateway, { checkpoints: "shell" });
    await run(env, "export STAGE=saved");
    const checkpoint = await env.checkpoint();
    await run(env, "export STAGE=later");
    await env.rollback(checkpoint);
    expect(await run(env, "echo $STAGE")).toBe("saved");
  });

  it("names a bad checkpoints value", async () => {
    const error = await openOn(gateway, { checkpoints: "files" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toBe('checkpoints must be "sandbox" or "shell", got "files"');
  });
});
