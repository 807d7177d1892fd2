/**
 * createEnvironmentPool(config, options): the public door to the pool. It
 * checks the pool's options and the config's pool-incompatible keys once,
 * then opens the first member before it resolves, so a config the backend
 * refuses fails here, with the backend's own error, not later in the
 * background refill.
 */

import { createEnvironment, type Environment, type EnvironmentConfig } from "../backends/index.js";
import { plainObject } from "../core/options.js";
import { normalizePoolOptions, rejectSharedConfig, type PoolOptions } from "./options.js";
import { Pool, type EnvironmentPool } from "./pool.js";
import { warmUp } from "./warm.js";

export async function createEnvironmentPool(config: EnvironmentConfig, options: PoolOptions): Promise<EnvironmentPool> {
  const normalized = normalizePoolOptions(options);
  // A copy: a caller changing its object later must not change the members opened after.
  const frozen = { ...plainObject("config", config) } as EnvironmentConfig;
  rejectSharedConfig(frozen as Record<string, unknown>);
  const first = await warmUp(await createEnvironment(frozen), normalized.checkTimeoutMs);
  return new Pool(() => createEnvironment(frozen), normalized, first);
}

/**
 * A pool over any way of opening a session (the compat suite's backends, a
 * gateway's sessions): the same pool, with the caller answerable for each
 * session being its own.
 */
export function poolOf(open: () => Promise<Environment>, options: PoolOptions): EnvironmentPool {
  return new Pool(open, normalizePoolOptions(options));
}
