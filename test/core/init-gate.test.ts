/**
 * Sessions opened at once on one machine run their inits (the login profile)
 * a few at a time: fifty gateway clients opened together on two cores all ran
 * past their init timeout, and each such session then ran without a snapshot,
 * its exported variables lost (CI, the 50-client gateway test).
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { INITS_AT_ONCE, withInitSlot } from "../../src/core/init-gate.js";
import { createEnvironment, type Environment } from "../../src/index.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The most entries between a "start" and its "end" at any moment. */
function mostAtOnce(lines: string[]): number {
  let now = 0;
  let most = 0;
  for (const line of lines) {
    now += line.startsWith("start") ? 1 : -1;
    most = Math.max(most, now);
  }
  return most;
}

describe("the init gate", () => {
  it("runs at most INITS_AT_ONCE of a group at once, in the order they came, and a group of none unbounded", async () => {
    const log: string[] = [];
    const task = (name: string) => async () => {
      log.push(`start ${name}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      log.push(`end ${name}`);
      return name;
    };
    const names = Array.from({ length: INITS_AT_ONCE * 3 }, (_, i) => String(i));
    expect(await Promise.all(names.map((name) => withInitSlot("g", task(name))))).toEqual(names);
    expect(mostAtOnce(log)).toBe(INITS_AT_ONCE);
    expect(log.filter((line) => line.startsWith("start"))).toEqual(names.map((name) => `start ${name}`));

    log.length = 0;
    await Promise.all(names.map((name) => withInitSlot(undefined, task(name))));
    expect(mostAtOnce(log)).toBe(names.length);
  });

  it("frees the slot of an init that throws", async () => {
    const failing = Array.from({ length: INITS_AT_ONCE + 1 }, () =>
      withInitSlot("h", () => Promise.reject(new Error("no"))).catch(() => "failed"),
    );
    expect(await Promise.all(failing)).toEqual(failing.map(() => "failed"));
    expect(await withInitSlot("h", () => Promise.resolve("ran"))).toBe("ran");
  });

  it("bounds local sessions opened at once: their login profiles never all run together", async () => {
    const home = mkdtempSync(join(tmpdir(), "init-gate-test-"));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const log = join(home, "log");
    // A profile that takes a while: every init's start and end land in one file. Each session runs its own
    // login (sessions of one origin would otherwise share the first one's snapshot).
    writeFileSync(join(home, ".bash_profile"), `echo "start $$" >> ${log}; sleep 0.3; echo "end $$" >> ${log}\n`);
    const count = INITS_AT_ONCE + 3;
    const envs = await Promise.all(
      Array.from({ length: count }, () =>
        createEnvironment({
          backend: "local",
          cwd: "/tmp",
          env: { HOME: home },
          initTimeoutMs: 120_000,
          reuseLoginSnapshot: false,
        }),
      ),
    );
    cleanups.push(...envs.map((env: Environment) => () => env.close()));
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines.filter((line) => line.startsWith("start"))).toHaveLength(count);
    expect(mostAtOnce(lines)).toBeLessThanOrEqual(INITS_AT_ONCE);
    for (const env of envs) {
      expect(env.snapshotReady).toBe(true);
      await env.execute("export KEPT=1");
      expect((await env.execute("echo $KEPT")).output).toBe("1\n");
    }
  });
});
