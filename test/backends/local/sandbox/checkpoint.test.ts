/**
 * Checkpoints of a sandboxed session against a command that plants symlinks
 * in its state dir (the sandbox binds it writable): this process copies the
 * snapshot outside the sandbox, so following a planted link would hand the
 * session a file it must not read (here a denied secret, or a dir of them
 * shaped like another session's state). Each operation must refuse.
 */

import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CheckpointError } from "../../../../src/index.js";
import { eventually } from "../../../helpers/processes.js";
import { HAVE_BWRAP, makeWorld, open, SKIP_REASON } from "./fixture.js";

describe.skipIf(!HAVE_BWRAP)(
  `sandboxed checkpoints and planted symlinks (${HAVE_BWRAP ? "bwrap" : SKIP_REASON})`,
  () => {
    const world = makeWorld();
    afterAll(() => world.cleanup());

    it("fork, rollback and checkpoint refuse a snapshot or checkpoint dir swapped for a symlink", async () => {
      // What another session's state dir looks like, hidden from this sandbox.
      writeFileSync(join(world.secretDir, "snapshot"), `export STOLEN=${world.secret}\n`);
      const env = await open(world, true);
      try {
        const one = await env.checkpoint();
        const two = await env.checkpoint();
        const state = dirname(env.paths.snapshot);
        const go = join(world.work, "go");
        const planted = join(world.work, "planted");
        // After its own call committed: a background job of the sandboxed session swaps the names.
        const plant = [
          `ln -sf ${world.secretFile} ${env.paths.snapshot}`,
          `ln -sf ${world.secretFile} ${state}/checkpoints/${one.id}/snapshot`,
          `rm -rf ${state}/checkpoints/${two.id} && ln -s ${world.secretDir} ${state}/checkpoints/${two.id}`,
          `touch ${planted}`,
        ].join(" && ");
        const job = await env.execute(`(while [ ! -e ${go} ]; do sleep 0.05; done; ${plant}) >/dev/null 2>&1 &`);
        expect(job.exitCode).toBe(0);
        writeFileSync(go, "");
        await eventually(() => existsSync(planted), "the links to be planted");

        for (const operation of [() => env.fork({ count: 1 }), () => env.rollback(one), () => env.rollback(two)]) {
          const error = await operation().catch((e: unknown) => e);
          expect(error).toBeInstanceOf(CheckpointError);
          expect((error as Error).message).not.toContain(world.secret);
        }
        const error = await env.checkpoint().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(CheckpointError);
        // Nowhere in the session's state dir (grep -r follows no symlink below its argument).
        const found = (() => {
          try {
            return execFileSync("grep", ["-rl", world.secret, state], { encoding: "utf8" });
          } catch {
            return "";
          }
        })();
        expect(found).toBe("");
      } finally {
        await env.close();
      }
    });
  },
);
