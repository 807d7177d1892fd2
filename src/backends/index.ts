/**
 * The one table of backends. Each backend's folder exports one record
 * (shared/backend-module.ts) from its index.ts, and everything outside
 * `src/backends/` asks this file about backends, never a backend's folder:
 * createEnvironment, a named session's policy, what a pool refuses, the
 * leftovers to prune. A record loads its transport only when `open` is
 * called, so `import "shellwright"` loads no backend SDK (modal,
 * @daytonaio/sdk, e2b). Adding a backend is one entry here.
 */

import { InvalidOptionError } from "../core/errors.js";
import { describe, plainObject } from "../core/options.js";
import type { Environment } from "../core/environment.js";
import type { BackendModule, KeptThings, StartCheck } from "./shared/backend-module.js";
import type { LeftoverSource } from "./shared/leftover-source.js";
import type { NamedSessionPolicy } from "./shared/named-policy.js";
import { apptainerBackend } from "./apptainer/index.js";
import { daytonaBackend } from "./daytona/index.js";
import { dockerBackend } from "./docker/index.js";
import { e2bBackend } from "./e2b/index.js";
import { gatewayBackend } from "./gateway/index.js";
import { localBackend } from "./local/index.js";
import { modalBackend } from "./modal/index.js";
import { sshBackend } from "./ssh/index.js";
import type { LocalConfig } from "./local/config.js";
import type { DockerConfig } from "./docker/config.js";
import type { SshConfig } from "./ssh/config.js";
import type { ApptainerConfig } from "./apptainer/config.js";
import type { ModalConfig } from "./modal/config.js";
import type { DaytonaConfig } from "./daytona/config.js";
import type { E2bConfig } from "./e2b/config.js";
import type { GatewayConfig } from "./gateway/config.js";

export type { CommonConfig } from "./shared/config.js";
export type {
  LocalConfig,
  DockerConfig,
  SshConfig,
  ApptainerConfig,
  ModalConfig,
  DaytonaConfig,
  E2bConfig,
  GatewayConfig,
  Environment,
};
export type { BackendModule, KeptThing, KeptThings, StartCheck } from "./shared/backend-module.js";
export type { Leftover, LeftoverSource } from "./shared/leftover-source.js";
export type { NamedSessionPolicy };

// What the rest of Shellwright shares with the backends, reached here rather than in backends/shared/.
export { SESSION_KEYS, withOutputCap } from "./shared/config.js";
export { ownerAliveHere, readOwner, writeOwner } from "./shared/owner.js";
export { shellwrightHome } from "./shared/shellwright-home.js";

export type EnvironmentConfig =
  LocalConfig | DockerConfig | SshConfig | ApptainerConfig | ModalConfig | DaytonaConfig | E2bConfig | GatewayConfig;

const MODULES = {
  local: localBackend,
  docker: dockerBackend,
  ssh: sshBackend,
  apptainer: apptainerBackend,
  modal: modalBackend,
  daytona: daytonaBackend,
  e2b: e2bBackend,
  gateway: gatewayBackend,
} as const satisfies Record<string, BackendModule>;

export type BackendName = keyof typeof MODULES;
export const BACKENDS = Object.keys(MODULES) as readonly BackendName[];
/** The backend of a config that names none. */
export const DEFAULT_BACKEND: BackendName = "local";

/** The record of `config`'s backend (the default when it names none); undefined for an unknown name. */
export function backendOf(config: { backend?: unknown } | undefined): BackendModule | undefined {
  const name = config?.backend ?? DEFAULT_BACKEND;
  return (BACKENDS as readonly unknown[]).includes(name) ? MODULES[name as BackendName] : undefined;
}

/** The name of `config`'s backend, the default when it names none. */
export function backendName(config: { backend?: unknown } | undefined): string {
  return (config?.backend as string | undefined) ?? DEFAULT_BACKEND;
}

export async function createEnvironment(config: EnvironmentConfig = {}): Promise<Environment> {
  const raw = plainObject("config", config);
  const backend = backendOf(raw);
  if (backend === undefined) {
    throw new InvalidOptionError(
      "backend",
      `Unknown backend ${describe(raw.backend)}; available: ${BACKENDS.join(", ")}`,
    );
  }
  if (raw.backend !== undefined) return backend.open(raw);
  try {
    return await backend.open(raw);
  } catch (error) {
    throw blameMissingBackend(error, raw);
  }
}

/**
 * A config without `backend` runs on the default backend, which refuses an
 * option of another one (`host`): the mistake is the missing `backend`, so
 * the error says which backends take the option and how to name one.
 */
function blameMissingBackend(error: unknown, raw: Record<string, unknown>): unknown {
  if (!(error instanceof InvalidOptionError) || !error.message.startsWith(`Unknown ${DEFAULT_BACKEND} backend option`))
    return error;
  const key = error.option;
  const takers = backendsTaking(key).filter((name) => name !== DEFAULT_BACKEND);
  if (takers.length === 0 || !(key in raw)) return error;
  const names =
    takers.length === 1
      ? `the ${takers[0]} backend`
      : `the ${takers.slice(0, -1).join(", ")} and ${takers.at(-1)} backends`;
  return new InvalidOptionError(
    key,
    `${describe(key)} is an option of ${names}, but the config names no "backend" and the default, ${DEFAULT_BACKEND}, takes no ${describe(key)}; add "backend": ${JSON.stringify(takers[0])}${takers.length > 1 ? " (or another of those)" : ""}`,
  );
}

/** The backends that take option `key`, in the table's order. */
export function backendsTaking(key: string): BackendName[] {
  return BACKENDS.filter((name) => MODULES[name].keys.includes(key));
}

/** What `backend` keeps for a named CLI session; a backend that declares nothing keeps its config as given. */
export function namedSessionPolicy(
  backend: string | undefined,
): NamedSessionPolicy<EnvironmentConfig & Record<string, unknown>> {
  return (backendOf({ backend })?.named ?? {}) as NamedSessionPolicy<EnvironmentConfig & Record<string, unknown>>;
}

/** An example value for `option` when `backend` cannot open without it; undefined when it can. */
export function requiredOptionExample(backend: string, option: string): string | undefined {
  const required = backendOf({ backend })?.required;
  // Own keys only: "constructor" is no option.
  return required !== undefined && Object.hasOwn(required, option) ? required[option] : undefined;
}

/** The first option of `config` a pool must refuse for its backend, with why; undefined when there is none. */
export function poolRefusal(config: Record<string, unknown>): { key: string; value: unknown; why: string } | undefined {
  for (const { key, why, refuses = given } of backendOf(config)?.poolRefuses ?? []) {
    if (refuses(config[key])) return { key, value: config[key], why };
  }
  return undefined;
}

const given = (value: unknown): boolean => value !== undefined && value !== false;

/** The backends that can leave something on this machine when their owner dies, each finding its own. */
export const LEFTOVER_SOURCES: readonly LeftoverSource[] = BACKENDS.flatMap((name) => MODULES[name].leftovers ?? []);

/** What backends keep on purpose beyond a session (kept containers), for `shellwright sessions`. */
export const KEPT_THINGS: readonly KeptThings[] = BACKENDS.flatMap((name) => MODULES[name].kept ?? []);

/** True when `config`'s backend sees this machine's files. */
export function sharesHostFiles(config: { backend?: unknown }): boolean {
  return backendOf(config)?.sharesHostFiles ?? false;
}

/** What `config`'s backend can check before a server says it is ready; nothing for most backends. */
export async function checkStart(config: { backend?: unknown }, start: StartCheck): Promise<void> {
  await backendOf(config)?.checkStart?.(start);
}

/** Hides a host path (a token file) from every sandbox any backend of this process starts, until the returned call. */
export function hideFromSandboxes(path: string): () => void {
  const undo = BACKENDS.flatMap((name) => MODULES[name].hideFromSandboxes?.(path) ?? []);
  return () => {
    for (const u of undo) u();
  };
}
