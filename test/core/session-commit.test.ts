/**
 * The state commit under concurrency, on the local backend at full size: env
 * and cwd are one snapshot file, renamed in the order calls finish, so two
 * racing calls can never leave one's env with the other's cwd.
 */

import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEnvironment } from "../../src/index.js";

const root = mkdtempSync(join(tmpdir(), "sw-commit-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the state commit", () => {
  it("shows 0 torn states in 1000 rounds of the two-call race", async () => {
    const ta = join(root, "ta");
    const tb = join(root, "tb");
    mkdirSync(ta);
    mkdirSync(tb);
    // Rounds run in parallel batches: one session per lane, rounds in order within it.
    const lanes = 10;
    const roundsPerLane = 100;
    const torn: string[] = [];
    const outcomes = new Map<string, number>();
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        const env = await createEnvironment({ backend: "local", cwd: ta });
        try {
          for (let round = 0; round < roundsPerLane; round++) {
            await Promise.all([env.execute(`cd ${tb}; export W=first`), env.execute(`cd ${ta}; export W=last`)]);
            const check = await env.execute(`echo "$W $PWD"; cd ${ta}`);
            const line = check.output.trim();
            outcomes.set(line, (outcomes.get(line) ?? 0) + 1);
            if (line !== `first ${tb}` && line !== `last ${ta}`) torn.push(line);
            if (check.cwd !== ta) torn.push(`reported ${check.cwd}`);
          }
        } finally {
          await env.close();
        }
      }),
    );
    expect(torn).toEqual([]);
    expect([...outcomes.values()].reduce((a, b) => a + b, 0)).toBe(lanes * roundsPerLane);
  }, 300_000);
});
