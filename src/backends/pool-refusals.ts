/**
 * The options a warm pool must refuse, declared by each backend in its own
 * config (a kept container, a state dir, a named sandbox: what members would
 * share). The pool asks here by the config's backend, and never refuses one
 * backend's option name for another (a docker `labels` is harmless, a
 * Daytona one resumes a shared sandbox).
 */

import type { BackendName } from "./index.js";
import type { PoolRefusal } from "./shared/config.js";
import { DAYTONA_POOL_REFUSED } from "./daytona/config.js";
import { DOCKER_POOL_REFUSED } from "./docker/config.js";
import { LOCAL_POOL_REFUSED } from "./local/config.js";
import { SSH_POOL_REFUSED } from "./ssh/config.js";

const REFUSED: Partial<Record<BackendName, readonly PoolRefusal[]>> = {
  local: LOCAL_POOL_REFUSED,
  docker: DOCKER_POOL_REFUSED,
  ssh: SSH_POOL_REFUSED,
  daytona: DAYTONA_POOL_REFUSED,
};

/** The first option of `config` a pool must refuse, with why; undefined when there is none. */
export function poolRefusal(config: Record<string, unknown>): { key: string; value: unknown; why: string } | undefined {
  const backend = (config.backend ?? "local") as BackendName;
  for (const { key, why, refuses = given } of REFUSED[backend] ?? []) {
    if (refuses(config[key])) return { key, value: config[key], why };
  }
  return undefined;
}

const given = (value: unknown): boolean => value !== undefined && value !== false;
