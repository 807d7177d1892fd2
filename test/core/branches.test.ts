/**
 * The rule between checkpoints and commands (core/branches.ts), with a
 * support whose save the test holds open: which calls hold an operation off,
 * and a call waiting behind one that is aborted.
 */

import { describe, expect, it } from "vitest";
import { Branches } from "../../src/core/branches.js";
import type { CheckpointSupport } from "../../src/core/checkpoint-support.js";
import { CheckpointError } from "../../src/core/errors.js";

function setup() {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const support = {
    workspaceRoot: undefined,
    save: () => held.then(() => undefined),
    restore: () => Promise.resolve(),
    release: () => Promise.resolve(),
    fork: () => Promise.reject(new Error("unused")),
    close: () => Promise.resolve(),
  } satisfies CheckpointSupport;
  const owner = {
    id: "s",
    paths: { snapshot: "/nonexistent/snapshot" } as never,
    cwd: "/",
    backend: "test",
    closed: false,
    snapshotReady: true,
  };
  return {
    branches: new Branches(
      owner,
      () => undefined,
      () => support,
    ),
    release,
  };
}

/** Lets every pending promise callback and I/O turn run. */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("Branches", () => {
  it("a long-lived call that is not isolated holds a checkpoint off; a long-lived isolated one does not", async () => {
    const { branches, release } = setup();
    release();
    let end!: () => void;
    const running = branches.around({ longLived: true }, () => new Promise<void>((resolve) => (end = resolve)));
    await turns();
    const error = await branches.checkpoint().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckpointError);
    expect((error as CheckpointError).reason).toBe("busy");
    end();
    await running;

    let endFollower!: () => void;
    const follower = branches.around(
      { longLived: true, isolated: true },
      () => new Promise<void>((resolve) => (endFollower = resolve)),
    );
    await turns();
    await expect(branches.checkpoint()).resolves.toMatchObject({ holds: { shell: true } });
    endFollower();
    await follower;
  });

  it("a call waiting behind a checkpoint stops waiting when its signal fires", async () => {
    const { branches, release } = setup();
    const checkpoint = branches.checkpoint();
    const controller = new AbortController();
    let saveReleased = false;
    const call = branches.around({ signal: controller.signal }, async () => !saveReleased);
    await turns();
    controller.abort();
    await turns();
    saveReleased = true;
    release();
    expect(await call).toBe(true);
    await checkpoint;
  });
});
