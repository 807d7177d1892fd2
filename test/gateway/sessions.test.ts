/**
 * The gateway's session registry on its own: the idle reaper against a
 * checkpoint, rollback or fork that is still under way on a real session.
 */

import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../helpers/close-after-each.js";
import { createEnvironment } from "../../src/index.js";
import { SessionRegistry } from "../../src/gateway/sessions.js";

const LIMITS = {
  maxSessions: 4,
  maxConcurrentExecutions: 4,
  maxLongLivedPerSession: 4,
  maxLongLivedExecutions: 4,
  idleTimeoutMs: 60_000,
};

const keep = closeAfterEach((registry: SessionRegistry) => registry.shutdown());

describe("the idle reaper", () => {
  it("leaves a session while an operation on it runs, however long, and reaps it once it is idle after", async () => {
    const registry = keep(new SessionRegistry(LIMITS));
    const { id } = await registry.create(() => createEnvironment({ backend: "local" }));
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const operation = registry.branch(id, () => held);
    // Long past the idle limit, as a copy of a large workspace may be.
    expect(await registry.reapIdle(Date.now() + 10 * LIMITS.idleTimeoutMs)).toEqual([]);
    expect(registry.info(id).id).toBe(id);
    finish();
    await operation;
    // Idle is counted from the operation's end.
    expect(await registry.reapIdle(Date.now() + LIMITS.idleTimeoutMs / 2)).toEqual([]);
    expect(await registry.reapIdle(Date.now() + 2 * LIMITS.idleTimeoutMs)).toEqual([id]);
  });
});
