/**
 * Failures of the local backend's checkpoints that lose nothing (docs/branching.md): a checkpoint that
 * fills its disk halfway, and a rollback whose owner is SIGKILLed at any moment of it
 * (test/fixtures/rollback-owner.mjs, on the built dist/).
 */

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CheckpointError, createEnvironment } from "../../../src/index.js";
import { cliHome } from "../../helpers/cli.js";
import { startOwnerFixture } from "../../helpers/owner-fixture.js";
import { killAll, pidsWithCmdline } from "../../helpers/proc-scan.js";
import { eventually } from "../../helpers/processes.js";
import { runOk } from "../../helpers/session.js";
import { tree } from "../../helpers/tree.js";

const ROOT = process.getuid?.() === 0;
const base = mkdtempSync(join(tmpdir(), "sw-ckfail-"));
const where = cliHome();
const started = new Set<number>();
afterAll(() => {
  killAll(started);
  where.remove();
  rmSync(base, { recursive: true, force: true });
});

describe.skipIf(!ROOT)("local checkpoints that fail lose nothing (mounting a small tmpfs needs root)", () => {
  it("a checkpoint that fills its disk halfway fails, keeps nothing and leaves the session as it was", async () => {
    const disk = join(base, "disk");
    mkdirSync(disk);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", disk]);
    try {
      const ws = join(disk, "ws");
      mkdirSync(ws);
      // Two megabytes: the copy of the first fits, the second does not.
      for (const name of ["a", "b"]) writeFileSync(join(ws, name), Buffer.alloc(1 << 20, name));
      const state = join(disk, "state");
      const env = await createEnvironment({ workspace: ws, cwd: ws, stateDir: state });
      try {
        await runOk(env, "export KEEP=1 && echo small > c");
        const before = tree(ws);
        const error = await env.checkpoint().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(CheckpointError);
        expect((error as CheckpointError).reason).toBe("failed");
        expect((error as Error).message).toMatch(/No space left on device/);
        expect(env.checkpoints()).toEqual([]);
        expect(readdirSync(join(state, "checkpoints"))).toEqual([]);
        expect(tree(ws)).toEqual(before);
        expect(await runOk(env, 'echo "$KEEP"; pwd; cat c')).toBe(`1\n${ws}\nsmall`);
        // With room again, the same session checkpoints and rolls back.
        await runOk(env, "rm a b");
        const cp = await env.checkpoint();
        await runOk(env, "echo later > c");
        await env.rollback(cp);
        expect(await runOk(env, "cat c")).toBe("small");
      } finally {
        await env.close();
      }
    } finally {
      // A process still in it would make a plain umount fail: detach it then (it goes once they end).
      execFileSync("umount", ["-l", disk]);
    }
  });

  it("a rollback whose owner is killed at any moment leaves the old files or the checkpoint's, never a mix", async () => {
    const fixture = join(import.meta.dirname, "../../fixtures/rollback-owner.mjs");
    // 0 ms kills it before the rollback has begun; later delays land in its copy, its renames, or after.
    for (const delayMs of [0, 10, 40, 120, 300]) {
      const ws = join(base, `ws-${delayMs}`);
      mkdirSync(ws);
      for (let i = 0; i < 40; i++) writeFileSync(join(ws, `f${i}`), Buffer.alloc(1 << 18, "o"));
      const { child, report } = await startOwnerFixture<{ owner: number; stateDir: string }>(
        fixture,
        [ws],
        started,
        where.env,
      );
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(child.pid!, "SIGKILL");
      await exited;
      // The owner's watchdog ends the session and removes what the rollback had made beside the root; the copy
      // the owner had started (its own child, not the session's) may still finish first.
      await eventually(() => pidsWithCmdline(ws).length === 0, "the dead owner's copy to end");
      await eventually(() => !existsSync(report.stateDir), "the watchdog to remove the session's state dir");
      const contents = new Set(readdirSync(ws).map((name) => readFileSync(join(ws, name), "latin1")));
      expect({ delayMs, files: readdirSync(ws).length, kinds: contents.size }).toEqual({
        delayMs,
        files: 40,
        kinds: 1,
      });
      expect(["o", "n"]).toContain([...contents][0]![0]);
      const beside = readdirSync(dirname(ws)).filter((name) => name.includes(`${basename(ws)}.`));
      expect({ delayMs, beside }).toEqual({ delayMs, beside: [] });
    }
  }, 240_000);
});
