/**
 * Checkpoints on every backend (docs/branching.md): where the backend has
 * them, the shell state comes back after a rollback and a fork's child
 * starts from it; elsewhere each operation fails with an UnsupportedError
 * that names the backend.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UnsupportedError, type Environment } from "../../src/index.js";
import { compatBackends } from "./backends.js";

/** The backends with checkpoints today (both entries of each: fast path and plain; the gateway over local). */
const SUPPORTED = /^(local(-sandbox)?|docker|ssh|apptainer|modal|daytona|e2b|gateway)(-plain)?$/;

for (const backend of compatBackends) {
  describe.skipIf(!backend.enabled)(`checkpoint: ${backend.name}`, () => {
    let env: Environment;

    beforeAll(async () => {
      env = await backend.create();
    });

    afterAll(async () => {
      await env?.close();
    });

    it.runIf(SUPPORTED.test(backend.name))("rolls the shell state back and forks from it", async () => {
      await env.execute("cd /tmp && export CP=one && f() { echo fn; }");
      const cp = await env.checkpoint();
      expect(cp).toMatchObject({
        id: expect.stringMatching(/^cp-[0-9a-f]{12}$/),
        sessionId: env.id,
        holds: { shell: true },
      });
      await env.execute("cd / && export CP=two && unset -f f");
      await env.rollback(cp);
      expect((await env.execute('pwd; echo "$CP"; f')).output.trim()).toBe("/tmp\none\nfn");
      const [child] = await env.fork({ count: 1 });
      try {
        await child!.execute("export CP=child");
        expect((await child!.execute('pwd; echo "$CP"; f')).output.trim()).toBe("/tmp\nchild\nfn");
        expect((await env.execute('echo "$CP"')).output.trim()).toBe("one");
      } finally {
        await child!.close();
      }
      await env.releaseCheckpoint(cp);
      expect(env.checkpoints()).toEqual([]);
    });

    it.runIf(SUPPORTED.test(backend.name))("a rollback ends the background processes started after it", async () => {
      const cp = await env.checkpoint();
      const pid = (await env.execute("(setsid sleep 300 >/dev/null 2>&1 & echo $!)")).output.trim();
      expect(pid).toMatch(/^\d+$/);
      await env.rollback(cp);
      // A zombie counts as gone: its reaper (this process, where it is a subreaper) need not have waited yet.
      const state = `s=$(cut -d' ' -f3 /proc/${pid}/stat 2>/dev/null); [ -n "$s" ] && [ "$s" != Z ] && echo alive || echo gone`;
      expect((await env.execute(state)).output.trim()).toBe("gone");
      await env.releaseCheckpoint(cp);
    });

    it.runIf(!SUPPORTED.test(backend.name))("says checkpoints are not supported, naming the backend", async () => {
      for (const call of [() => env.checkpoint(), () => env.fork({ count: 1 })]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(UnsupportedError);
        expect((error as Error).message).toContain(`on the ${env.backend} backend`);
      }
      expect((await env.execute("echo still")).output.trim()).toBe("still");
    });
  });
}
