/**
 * The pool on every backend the compat suite has: createEnvironmentPool with
 * the backend's config, and what "fresh" promises checked from inside the
 * next member a caller gets (docs/pools.md): no state, no files in the
 * earlier member's temp dir, no background process of it.
 */

import { dirname } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEnvironmentPool, type EnvironmentPool } from "../../src/index.js";
import { compatBackends } from "./backends.js";

const pools: EnvironmentPool[] = [];
afterEach(async () => {
  await Promise.allSettled(pools.splice(0).map((pool) => pool.close()));
});

/** A sleep no other run starts; the pattern in the check is bracketed so it never matches its own command line. */
function uniqueSleep(index: number): { start: string; count: string } {
  const seconds = `4${String(process.pid).padStart(7, "0")}${String(index).padStart(2, "0")}`;
  const pattern = `sleep ${seconds.slice(0, -1)}[${seconds.slice(-1)}]`;
  return {
    start: `(sleep ${seconds} >/dev/null 2>&1 &)`,
    count: `for p in /proc/[0-9]*; do { tr '\\0' ' ' < $p/cmdline; } 2>/dev/null; echo; done | grep -c '${pattern}' || true`,
  };
}

/**
 * Backends whose boxes are stand-ins running on this machine (the apptainer
 * stand-in, the fake Modal and Daytona clients): their members share the
 * host's /tmp, as real boxes never do (a Modal or Daytona sandbox of its own,
 * an Apptainer instance under --containall), so a file one wrote there is the
 * host's, not the pool's to hide.
 */
const sharesHostTmp = new Set([
  "apptainer",
  "apptainer-plain",
  "modal",
  "modal-plain",
  "daytona",
  "daytona-plain",
  "e2b",
  "e2b-plain",
]);

for (const [index, backend] of compatBackends.entries()) {
  const { poolConfig } = backend;
  describe.skipIf(!backend.enabled || poolConfig === undefined)(`pool compat: ${backend.name}`, () => {
    it("hands out fresh members: nothing of one handed out before is visible", async () => {
      const sleep = uniqueSleep(index);
      const pool = await createEnvironmentPool(await poolConfig!(), { size: 2 });
      pools.push(pool);
      await pool.ready();

      const first = await pool.acquire();
      const firstDir = dirname(first.paths.snapshot);
      const setUp = await first.execute(
        `export POOL_MARK=one; pool_fn() { :; }; alias pool_alias=ls; cd /usr; echo x > ${firstDir}/left-behind-${first.id}; ${sleep.start}`,
      );
      expect(setUp.exitCode).toBe(0);
      // The background process really runs in the first member (else the check below would prove nothing).
      // Counted in a call of its own: the plain path's bash carries the command that started it in its argv.
      expect((await first.execute(sleep.count)).output.trim()).toBe("1");
      await first.close();

      const next = await pool.acquire();
      expect(next.id).not.toBe(first.id);
      // Where the config starts a session, never where the earlier member went.
      const startCwd = next.cwd;
      expect(startCwd).not.toBe("/usr");
      const files = sharesHostTmp.has(backend.name)
        ? ""
        : `ls ${firstDir}/left-behind-${first.id} 2>/dev/null || echo nofile; `;
      const seen = await next.execute(
        `echo "\${POOL_MARK-unset}"; type -t pool_fn || echo nofn; alias pool_alias 2>/dev/null || echo noalias; pwd; ${files}${sleep.count}`,
      );
      expect(seen.output).toBe(`unset\nnofn\nnoalias\n${startCwd}\n${files === "" ? "" : "nofile\n"}0\n`);
      await next.close();
    });
  });
}
