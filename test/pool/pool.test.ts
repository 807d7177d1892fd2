/**
 * The pool on the local backend, for real: members are real sessions; what
 * is checked is what a caller sees (state, files, processes) and what the
 * pool leaves behind.
 */

import { existsSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEnvironmentPool, SessionClosedError, type Environment, type EnvironmentPool } from "../../src/index.js";
import { alive, eventually } from "../helpers/processes.js";
import { startTestGateway, TOKEN } from "../gateway/helpers.js";
import { recordingPool } from "../helpers/recording-pool.js";

const pools: EnvironmentPool[] = [];
afterEach(async () => {
  await Promise.allSettled(pools.splice(0).map((pool) => pool.close()));
});

const stateDir = (env: Environment): string => dirname(env.paths.snapshot);

describe("pool", () => {
  it("hands out a fresh session: nothing of one handed out before is visible", async () => {
    const pool = await createEnvironmentPool({ backend: "local" }, { size: 2 });
    pools.push(pool);
    await pool.ready();
    const first = await pool.acquire();
    const dirOfFirst = stateDir(first);
    const setUp = await first.execute(
      `export POOL_SECRET=one; pool_fn() { :; }; alias pool_alias=ls; cd /; echo x > ${dirOfFirst}/left-behind; sleep 4711 >/dev/null 2>&1 & echo $!`,
    );
    const background = Number(setUp.output.trim());
    expect(alive(background)).toBe(true);
    // What a session sees of its own: variables, functions, aliases, cwd, and its state directory's files.
    // (Another live session's directory is reachable by its path on an unsandboxed local host; it is never this one's.)
    const startCwd = process.cwd();
    const seen = (env: Environment): string =>
      `echo "\${POOL_SECRET-unset}"; type -t pool_fn || echo nofn; alias pool_alias 2>/dev/null || echo noalias; pwd; ls ${stateDir(env)}/left-behind 2>/dev/null || echo nofile`;
    const fresh = `unset\nnofn\nnoalias\n${startCwd}\nnofile\n`;
    // A session handed out while the first is still open does not see it.
    const beside = await pool.acquire();
    expect((await beside.execute(seen(beside))).output).toBe(fresh);
    await first.close();
    expect(alive(background)).toBe(false);
    const next = await pool.acquire();
    expect((await next.execute(seen(next))).output).toBe(fresh);
    expect(existsSync(dirOfFirst)).toBe(false);
    const ids = new Set([first.id, beside.id, next.id]);
    expect(ids.size).toBe(3);
    expect(new Set([stateDir(first), stateDir(beside), stateDir(next)]).size).toBe(3);
    await Promise.all([beside.close(), next.close()]);
  });

  it("an empty pool opens a session for each acquire, as createEnvironment would", async () => {
    const { pool, opened } = recordingPool(1, pools);
    const sessions = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire()]);
    expect(new Set(sessions.map((s) => s.id)).size).toBe(3);
    for (const s of sessions) expect((await s.execute("echo ok")).output).toBe("ok\n");
    expect(opened.length).toBeGreaterThanOrEqual(3);
    await Promise.all(sessions.map((s) => s.close()));
  });

  it("a warm hand-out starts no open beside the caller's first call; the refill follows", async () => {
    const { pool, opened } = recordingPool(2, pools);
    await pool.ready();
    const member = await pool.acquire();
    // Started at once, the replacement's open would be in flight here, beside the caller's first call.
    expect(pool.stats()).toMatchObject({ idle: 1, opening: 0, handedOut: 1 });
    expect((await member.execute("echo ok")).output).toBe("ok\n");
    await pool.ready();
    expect(pool.stats()).toMatchObject({ idle: 2, handedOut: 1 });
    expect(opened.length).toBe(3);
    await member.close();
  });

  it("a dead idle member is closed and replaced, never handed out", async () => {
    const warnings: string[] = [];
    const { pool, opened } = recordingPool(2, pools, warnings);
    await pool.ready();
    const dead = opened[0]!;
    // Its state directory gone (a tmp cleaner, a wiped /dev/shm): every call fails.
    rmSync(stateDir(dead), { recursive: true, force: true });
    const got = await pool.acquire();
    expect(got).not.toBe(dead);
    expect((await got.execute("echo ok")).output).toBe("ok\n");
    expect(warnings.join("\n")).toContain(`session ${dead.id}) failed its check`);
    await eventually(() => dead.closed, "the dead member is closed");
    // And replaced: the pool fills up again.
    await pool.ready();
    expect(pool.stats()).toMatchObject({ idle: 2, handedOut: 1 });
    await got.close();
    expect(pool.stats().handedOut).toBe(0);
  });

  it("close() ends every member, idle or handed out, and what they started", async () => {
    const { pool, opened } = recordingPool(2, pools);
    await pool.ready();
    const out = await pool.acquire();
    const background = Number((await out.execute("sleep 4712 >/dev/null 2>&1 & echo $!")).output.trim());
    expect(alive(background)).toBe(true);
    // Full again (the refill follows a hand-out): two idle members and the one handed out.
    await pool.ready();
    await pool.close();
    expect(opened.length).toBeGreaterThanOrEqual(3);
    for (const member of opened) {
      expect(member.closed).toBe(true);
      expect(existsSync(stateDir(member))).toBe(false);
    }
    expect(alive(background)).toBe(false);
    await expect(pool.acquire()).rejects.toBeInstanceOf(SessionClosedError);
  });

  it("close() while members are still opening ends them as they arrive", async () => {
    const { pool, opened } = recordingPool(3, pools);
    await pool.close();
    // Every open that was in flight has finished, and what it brought is closed.
    expect(opened.length).toBeGreaterThan(0);
    for (const member of opened) expect(member.closed).toBe(true);
    expect(pool.stats()).toEqual({ idle: 0, opening: 0, handedOut: 0 });
  });

  it("counts against the gateway's session limit: the refill stops at it, acquire still hands out", async () => {
    const gateway = await startTestGateway({ maxSessions: 2 });
    try {
      const warnings: string[] = [];
      const pool = await createEnvironmentPool(
        { backend: "gateway", url: gateway.url, token: TOKEN },
        { size: 3, onWarning: (m) => warnings.push(m) },
      );
      pools.push(pool);
      await expect(pool.ready()).rejects.toThrow(/maxSessions/);
      expect(warnings.join("\n")).toMatch(/opening a member failed .*maxSessions/);
      expect(pool.stats().idle).toBe(2);
      expect(gateway.registry.size).toBe(2);
      const session = await pool.acquire();
      expect((await session.execute("echo ok")).output).toBe("ok\n");
      await pool.close();
      await eventually(() => gateway.registry.size === 0, "the gateway's sessions are closed");
    } finally {
      await gateway.close();
    }
  });
});
