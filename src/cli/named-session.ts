/**
 * Opening a named CLI session on any backend: where each backend keeps the
 * state a later process needs to reattach (the snapshot must outlive this
 * process), and what closing one for good means.
 */

import { createEnvironment, namedSessionPolicy, type EnvironmentConfig } from "../backends/index.js";
import type { Environment } from "../core/environment.js";
import type { SessionStore, StoredSession } from "./session-store.js";

type Config = EnvironmentConfig & Record<string, unknown>;

/** The config of a new named session: the backend's state must outlive this process. */
export function namedConfig(name: string, config: EnvironmentConfig, store: SessionStore): EnvironmentConfig {
  const one = oneShot(config);
  return namedSessionPolicy(one.backend).create?.(one, name, store.dir(name)) ?? one;
}

/**
 * Reopens a stored session; `forClose` lets the backend remove what it kept (a
 * container); `overrides` are this process's own options (an output cap).
 */
export function reopen(
  stored: StoredSession,
  store: SessionStore,
  options: { forClose?: boolean; overrides?: Partial<EnvironmentConfig> } = {},
): Promise<Environment> {
  const config = {
    ...(stored.config ?? { backend: stored.backend }),
    ...options.overrides,
    resume: stored.state,
  } as Config;
  const policy = namedSessionPolicy(config.backend);
  const reopened = policy.reopen?.(config, store.dir(stored.name), options.forClose === true) ?? config;
  return createEnvironment(oneShot(reopened));
}

/**
 * A CLI process runs one command and exits: a fast-path helper would only be
 * started to be thrown away, and one still being copied into a container
 * kept `shellwright close` waiting on the copy's stream for over a minute.
 */
export function oneShot(config: EnvironmentConfig): Config {
  const c = config as Config;
  return namedSessionPolicy(c.backend).keepsFastPath === true ? c : { ...c, fastPath: false };
}

/** What must be remembered after the first command to reattach later. */
export function rememberedConfig(config: EnvironmentConfig, env: Environment): EnvironmentConfig {
  // An output cap is one invocation's choice, not the session's.
  const rest = { ...config } as Config;
  delete rest.maxOutputBytes;
  delete rest.maxOutputChars;
  return namedSessionPolicy(rest.backend).remember?.(rest, env) ?? rest;
}
