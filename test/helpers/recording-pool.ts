/** A pool over local sessions that records every member it opens, for tests that reach into its members. */

import { createEnvironment, type Environment } from "../../src/index.js";
import { poolOf } from "../../src/pool/create-pool.js";
import type { EnvironmentPool } from "../../src/pool/pool.js";

/** The pool goes into `pools`, for the test file's cleanup to close. */
export function recordingPool(
  size: number,
  pools: EnvironmentPool[],
  warnings: string[] = [],
): { pool: EnvironmentPool; opened: Environment[] } {
  const opened: Environment[] = [];
  const pool = poolOf(
    async () => {
      const env = await createEnvironment({ backend: "local" });
      opened.push(env);
      return env;
    },
    { size, onWarning: (m) => warnings.push(m) },
  );
  pools.push(pool);
  return { pool, opened };
}
