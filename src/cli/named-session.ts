/**
 * Opening a named CLI session on any backend: where each backend keeps the
 * state a later process needs to reattach (the snapshot must outlive this
 * process), and what closing one for good means.
 */

import { dirname } from "node:path";
import { createEnvironment, type EnvironmentConfig } from "../backends/index.js";
import type { Environment } from "../core/environment.js";
import type { SessionStore, StoredSession } from "./session-store.js";

/** The config of a new named session: the backend's state must outlive this process. */
export function namedConfig(name: string, config: EnvironmentConfig, store: SessionStore): EnvironmentConfig {
  config = oneShot(config);
  switch (config.backend ?? "local") {
    // Its background jobs and files wait for `shellwright close NAME`, not for this process.
    case "local":
      return { ...config, stateDir: store.dir(name), outliveOwner: true } as EnvironmentConfig;
    case "ssh":
      return { ...config, outliveOwner: true } as EnvironmentConfig;
    case "docker":
      return { containerName: `shellwright-${name}`, keepContainer: true, ...config } as EnvironmentConfig;
    default:
      return config;
  }
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
  } as EnvironmentConfig & {
    keepContainer?: boolean;
  };
  if (config.backend === undefined || config.backend === "local")
    (config as { stateDir?: string }).stateDir = store.dir(stored.name);
  // Sessions stored before the option existed must not end with this process either.
  if (config.backend === undefined || config.backend === "local" || config.backend === "ssh")
    (config as { outliveOwner?: boolean }).outliveOwner = true;
  if (options.forClose && config.backend === "docker") config.keepContainer = false;
  return createEnvironment(oneShot(config));
}

/**
 * A CLI process runs one command and exits: a fast-path helper would only be
 * started to be thrown away, and one still being copied into a container
 * kept `shellwright close` waiting on the copy's stream for over a minute.
 * (The gateway's server decides for its own sessions.)
 */
function oneShot(config: EnvironmentConfig): EnvironmentConfig {
  return config.backend === "gateway" ? config : ({ ...config, fastPath: false } as EnvironmentConfig);
}

/** What must be remembered after the first command to reattach later. */
export function rememberedConfig(config: EnvironmentConfig, env: Environment): EnvironmentConfig {
  // An output cap is one invocation's choice, not the session's.
  config = { ...config };
  delete (config as { maxOutputChars?: number }).maxOutputChars;
  // The SSH backend's snapshot lives in a directory it made on the host.
  if (config.backend === "ssh") return { ...config, remoteTempDir: dirname(env.paths.snapshot) } as EnvironmentConfig;
  if (config.backend === undefined || config.backend === "local") {
    // The state dir is the session's own directory, found again by name.
    const rest: EnvironmentConfig & { stateDir?: string } = { ...config };
    delete rest.stateDir;
    return rest;
  }
  return config;
}
