/** RemoteTreeKiller.guard: the handle the session gets still behaves as the backend's own. */

import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { RemoteTreeKiller } from "../../../src/backends/shared/remote-tree.js";
import type { ProcessHandle } from "../../../src/core/transport.js";

/** A handle whose kill() reads a private field, as a fast-path call's does. */
class PrivateHandle implements ProcessHandle {
  readonly output = new PassThrough();
  #killed = 0;
  get killed(): number {
    return this.#killed;
  }
  wait(): Promise<number> {
    return Promise.resolve(0);
  }
  kill(): void {
    this.#killed++;
  }
}

describe("RemoteTreeKiller.guard", () => {
  it("kills through the handle's own kill(), also one that reads its private fields", async () => {
    const killer = new RemoteTreeKiller("test", () => Promise.reject(new Error("no backend here")));
    const handle = new PrivateHandle();
    const guarded = killer.guard(handle, undefined, { watchPids: false });
    expect(() => guarded.kill()).not.toThrow();
    expect(handle.killed).toBe(1);
    expect(await guarded.wait()).toBe(0);
  });
});
