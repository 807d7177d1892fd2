/**
 * Checkpoints of a whole sandbox on modal and daytona (sandbox-checkpoints.ts,
 * docs/branching.md), against the FAKE SDK clients (test/fakes/) with a /tmp
 * of each sandbox's own (private-tmp.ts): the clouds cannot be reached from
 * here. What the compat suite's shell-state checks cannot show: the files
 * come back, forks get them, snapshots are deleted, failures and aborts.
 */

import { describe, expect, it, vi } from "vitest";
import { CheckpointError, createEnvironment, type Environment } from "../../../src/index.js";
import type { Session } from "../../../src/core/session.js";
import { FakeDaytona } from "../../fakes/fake-daytona.js";
import { FakeModalClient } from "../../fakes/fake-modal.js";
import { PrivateTmp } from "../../fakes/private-tmp.js";
import { noStaticHelper, skipAllUnless, skipUnless } from "../../helpers/native-helper.js";
import { runOk } from "../../helpers/session.js";

/** One backend's fake, seen the same way by every case. */
interface Stand {
  name: string;
  open(fastPath?: boolean): Promise<Environment>;
  /** The snapshots the fake still holds. */
  snapshots(): string[];
  /** The sandboxes made so far, and those still alive. */
  made(): number;
  alive(): number;
  failSnapshot(error: Error | undefined): void;
  holdSnapshot(hold: Promise<void> | undefined): void;
  snapshotCalls(): number;
  failCreate(error: Error | undefined): void;
  /** Sandbox creation (a fork's too) fails after `made` more have been made. */
  failCreateAfter(made: number, error: Error): void;
  /** Sandbox creation waits for `hold` first; says how many creations have been asked for since. */
  holdCreate(hold: Promise<void>): () => number;
}

function modalStand(): Stand {
  const client = new FakeModalClient({ privateTmp: true });
  return {
    name: "modal",
    open: (fastPath = true) => createEnvironment({ backend: "modal", client, fastPath }),
    snapshots: () => [...client.images.saved.keys()],
    made: () => client.sandboxesCreated.length,
    alive: () => client.sandboxesCreated.filter((sandbox) => !sandbox.terminated).length,
    failSnapshot: (error) => (client.failSnapshot = error),
    holdSnapshot: (hold) => (client.snapshotHold = hold),
    snapshotCalls: () => client.snapshotCalls.length,
    failCreate: (error) => (client.failCreate = error),
    failCreateAfter: (made, error) => {
      const create = client.sandboxes.create;
      let left = made;
      client.sandboxes.create = (...args) => (left-- > 0 ? create(...args) : Promise.reject(error));
    },
    holdCreate: (hold) => {
      const create = client.sandboxes.create;
      let asked = 0;
      client.sandboxes.create = async (...args) => (asked++, await hold, create(...args));
      return () => asked;
    },
  };
}

function daytonaStand(): Stand {
  const client = new FakeDaytona({ privateTmp: true });
  return {
    name: "daytona",
    open: (fastPath = true) => createEnvironment({ backend: "daytona", client, fastPath }),
    snapshots: () => [...client.snapshots.keys()],
    made: () => client.sandboxes.length,
    alive: () => client.sandboxes.filter((sandbox) => sandbox.state !== "destroyed").length,
    failSnapshot: (error) => (client.failSnapshot = error),
    holdSnapshot: (hold) => (client.snapshotHold = hold),
    snapshotCalls: () => client.sandboxes.flatMap((s) => s.calls).filter((c) => c.startsWith("createSnapshot")).length,
    failCreate: (error) => (client.failCreate = error),
    failCreateAfter: (made, error) => {
      const add = client.add.bind(client);
      let left = made;
      client.add = (...args) => (left-- > 0 ? add(...args) : Promise.reject(error));
    },
    holdCreate: (hold) => {
      const add = client.add.bind(client);
      let asked = 0;
      client.add = async (...args) => (asked++, await hold, add(...args));
      return () => asked;
    },
  };
}

async function using<T>(env: Environment, fn: (env: Environment) => Promise<T>): Promise<T> {
  try {
    return await fn(env);
  } finally {
    await env.close();
  }
}

/** The files the cases write: in the sandbox's own /tmp, the part of it the fakes keep per sandbox. */
const WORK = "/tmp/work";
const STATE = `cat kept; [ -e made ] && echo made || echo no-made; cat gone 2>/dev/null || echo no-gone; echo "$V"; pwd`;

describe.each([
  { backend: "modal", stand: modalStand },
  { backend: "daytona", stand: daytonaStand },
])("sandbox checkpoints: $backend", ({ stand }) => {
  skipAllUnless(PrivateTmp.unavailable());
  it("a rollback brings the sandbox's files back with the shell state, in a new sandbox", async () => {
    const fake = stand();
    await using(await fake.open(), async (env) => {
      await runOk(env, `mkdir -p ${WORK} && cd ${WORK} && echo one > kept && echo here > gone && export V=one`);
      const cp = await env.checkpoint();
      expect(cp.holds).toEqual({ shell: true, filesystem: { snapshot: fake.snapshots()[0] } });
      await runOk(env, `echo two > kept && echo new > made && rm gone && export V=two && cd /`);
      expect(await runOk(env, `cd ${WORK} && ${STATE}`)).toBe(`two\nmade\nno-gone\ntwo\n${WORK}`);
      await env.rollback(cp);
      expect(await runOk(env, STATE)).toBe(`one\nno-made\nhere\none\n${WORK}`);
      // The old sandbox went: one made at open, one by the rollback.
      expect([fake.made(), fake.alive()]).toEqual([2, 1]);
      // A second rollback to the same checkpoint works again from it.
      await runOk(env, "echo three > kept");
      await env.rollback(cp);
      expect(await runOk(env, "cat kept")).toBe("one");
    });
  });

  it("a fork's children start from the files and are independent of each other and of the parent", async () => {
    const fake = stand();
    await using(await fake.open(false), async (env) => {
      await runOk(env, `mkdir -p ${WORK} && cd ${WORK} && echo parent > kept && export V=parent`);
      const children = await env.fork({ count: 2 });
      try {
        const [a, b] = children as [Environment, Environment];
        expect(await runOk(a, 'cat kept; echo "$V"; pwd')).toBe(`parent\nparent\n${WORK}`);
        await runOk(a, "echo a > kept && echo a > made && export V=a");
        expect(await runOk(b, `${STATE}`)).toBe(`parent\nno-made\nno-gone\nparent\n${WORK}`);
        expect(await runOk(env, `${STATE}`)).toBe(`parent\nno-made\nno-gone\nparent\n${WORK}`);
        // Closing the parent's sibling leaves the other child working.
        await a.close();
        expect(await runOk(b, "cat kept")).toBe("parent");
      } finally {
        await Promise.all(children.map((child) => child.close()));
      }
      // Modal's fork image is deleted once its children are closed; Daytona's fork makes none.
      expect(fake.snapshots()).toEqual([]);
    });
  });

  it("releasing a checkpoint deletes its snapshot; close deletes the rest", async () => {
    const fake = stand();
    const env = await fake.open(false);
    let first: string | undefined;
    await using(env, async () => {
      const one = await env.checkpoint();
      const two = await env.checkpoint();
      first = one.holds.filesystem?.snapshot;
      expect(fake.snapshots()).toEqual([first, two.holds.filesystem?.snapshot]);
      await env.releaseCheckpoint(one);
      expect(fake.snapshots()).toEqual([two.holds.filesystem?.snapshot]);
    });
    expect(fake.snapshots()).toEqual([]);
    expect(fake.alive()).toBe(0);
  });

  it("a snapshot that fails leaves the session as it was and says why", async () => {
    const fake = stand();
    await using(await fake.open(false), async (env) => {
      await runOk(env, `mkdir -p ${WORK} && cd ${WORK} && echo one > kept && export V=one`);
      fake.failSnapshot(new Error("snapshot quota exceeded"));
      const error = await env.checkpoint().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointError);
      expect(error).toMatchObject({ reason: "failed", backend: fake.name });
      expect((error as Error).message).toContain("snapshot quota exceeded");
      expect(env.checkpoints()).toEqual([]);
      expect(fake.snapshots()).toEqual([]);
      expect(await runOk(env, 'cat kept; echo "$V"; pwd')).toBe(`one\none\n${WORK}`);
      expect(fake.made()).toBe(1);
    });
  });

  it("a rollback whose new sandbox cannot be made leaves the session as it was", async () => {
    const fake = stand();
    await using(await fake.open(false), async (env) => {
      await runOk(env, `mkdir -p ${WORK} && cd ${WORK} && echo one > kept`);
      const cp = await env.checkpoint();
      await runOk(env, "echo two > kept && export V=two");
      fake.failCreate(new Error("no capacity in region"));
      const error = await env.rollback(cp).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointError);
      expect(error).toMatchObject({ reason: "failed" });
      expect((error as Error).message).toContain("no capacity in region");
      expect(await runOk(env, 'cat kept; echo "$V"')).toBe("two\ntwo");
      fake.failCreate(undefined);
      await env.rollback(cp);
      expect(await runOk(env, "cat kept")).toBe("one");
    });
  });

  it("a fork whose child cannot be made leaves no child open and no snapshot behind", async () => {
    const fake = stand();
    await using(await fake.open(false), async (env) => {
      await runOk(env, `mkdir -p ${WORK} && echo one > ${WORK}/kept`);
      // The first child is made (fork opens them one at a time up to 8 at once: a count of 3 asks for all
      // three together, so one or two may be open when the failure comes); the rest fail.
      fake.failCreateAfter(1, new Error("no capacity in region"));
      const error = await env.fork({ count: 3 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointError);
      expect((error as Error).message).toContain("no capacity in region");
      expect(fake.made()).toBe(2);
      expect([fake.alive(), fake.snapshots()]).toEqual([1, []]);
      expect(await runOk(env, `cat ${WORK}/kept`)).toBe("one");
    });
  });

  it("an abort stops waiting for the snapshot, keeps nothing, and deletes what the SDK makes after", async () => {
    const fake = stand();
    await using(await fake.open(false), async (env) => {
      let release!: () => void;
      fake.holdSnapshot(new Promise<void>((resolve) => (release = resolve)));
      const controller = new AbortController();
      const pending = env.checkpoint({ signal: controller.signal }).catch((e: unknown) => e);
      await vi.waitFor(() => expect(fake.snapshotCalls()).toBe(1), { timeout: 30_000 });
      controller.abort();
      const error = await pending;
      expect(error).toBeInstanceOf(CheckpointError);
      expect(error).toMatchObject({ reason: "aborted" });
      expect(env.checkpoints()).toEqual([]);
      release();
      fake.holdSnapshot(undefined);
      // The snapshot the SDK finished after the abort is deleted once it arrives.
      await vi.waitFor(() => expect(fake.snapshotCalls()).toBe(1), { timeout: 30_000 });
      await vi.waitFor(() => expect(fake.snapshots()).toEqual([]), { timeout: 30_000 });
      expect(await runOk(env, "echo still")).toBe("still");
      // A rollback aborted before it starts makes no sandbox.
      const cp = await env.checkpoint();
      const made = fake.made();
      const aborted = await env.rollback(cp, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
      expect(aborted).toMatchObject({ reason: "aborted" });
      expect(fake.made()).toBe(made);
    });
  });

  it("a rollback aborted while its new sandbox is made leaves the session as it was and deletes that sandbox", async () => {
    const fake = stand();
    await using(await fake.open(false), async (env) => {
      await runOk(env, `mkdir -p ${WORK} && echo one > ${WORK}/kept`);
      const cp = await env.checkpoint();
      await runOk(env, `echo two > ${WORK}/kept && export V=two`);
      let release!: () => void;
      const asked = fake.holdCreate(new Promise<void>((resolve) => (release = resolve)));
      const controller = new AbortController();
      const pending = env.rollback(cp, { signal: controller.signal }).catch((e: unknown) => e);
      await vi.waitFor(() => expect(asked()).toBe(1), { timeout: 30_000 });
      controller.abort();
      expect(await pending).toMatchObject({ reason: "aborted" });
      expect(await runOk(env, `cat ${WORK}/kept; echo "$V"`)).toBe("two\ntwo");
      release();
      // The sandbox the SDK made after the abort is let go once it arrives.
      await vi.waitFor(() => expect([fake.made(), fake.alive()]).toEqual([2, 1]), { timeout: 30_000 });
      expect(await runOk(env, `cat ${WORK}/kept`)).toBe("two");
    });
  });

  it("after a rollback the session's helper is the new sandbox's own copy, run by its fast path", async (context) => {
    skipUnless(context, noStaticHelper);
    const fake = stand();
    await using(await fake.open(), async (env) => {
      const session = env as Session;
      const first = await session.helperPath();
      await session.rollback(await session.checkpoint());
      await runOk(env, "true");
      expect(await session.whenFastPathReady()).toBe(true);
      // The new sandbox's image holds the old copy too; the session's copy is the one its fast path made there.
      const second = await session.helperPath();
      expect(second).not.toBe(first);
      expect(await runOk(env, `[ -x ${second} ] && echo ok`)).toBe("ok");
    });
  });
});
