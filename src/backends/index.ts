/**
 * createEnvironment(config): checks `backend` and hands the config to that
 * backend's module, which validates it once and opens the session. Each
 * backend's module is loaded on first use, so `import "shellwright"` loads no
 * backend SDK (modal, @daytonaio/sdk), and adding a backend is one entry here.
 */

import { InvalidOptionError } from "../core/errors.js";
import { describe, plainObject } from "../core/options.js";
import type { Environment } from "../core/environment.js";
import type { LocalConfig } from "./local/config.js";
import type { DockerConfig } from "./docker/config.js";
import type { SshConfig } from "./ssh/config.js";
import type { ApptainerConfig } from "./apptainer/config.js";
import type { ModalConfig } from "./modal/config.js";
import type { DaytonaConfig } from "./daytona/config.js";
import type { GatewayConfig } from "./gateway/config.js";

export type { CommonConfig } from "./shared/config.js";
export type {
  LocalConfig,
  DockerConfig,
  SshConfig,
  ApptainerConfig,
  ModalConfig,
  DaytonaConfig,
  GatewayConfig,
  Environment,
};

export type EnvironmentConfig =
  LocalConfig | DockerConfig | SshConfig | ApptainerConfig | ModalConfig | DaytonaConfig | GatewayConfig;

export const BACKENDS = ["local", "docker", "ssh", "apptainer", "modal", "daytona", "gateway"] as const;
export type BackendName = (typeof BACKENDS)[number];

type Open = (raw: Record<string, unknown>) => Promise<Environment>;

const OPEN: { readonly [Name in BackendName]: () => Promise<Open> } = {
  local: async () => (await import("./local/index.js")).openLocal,
  docker: async () => (await import("./docker/index.js")).openDocker,
  ssh: async () => (await import("./ssh/index.js")).openSsh,
  apptainer: async () => (await import("./apptainer/index.js")).openApptainer,
  modal: async () => (await import("./modal/index.js")).openModal,
  daytona: async () => (await import("./daytona/index.js")).openDaytona,
  gateway: async () => (await import("./gateway/index.js")).openGateway,
};

export async function createEnvironment(config: EnvironmentConfig = {}): Promise<Environment> {
  const raw = plainObject("config", config);
  const backend = raw.backend ?? "local";
  if (!(BACKENDS as readonly unknown[]).includes(backend)) {
    throw new InvalidOptionError("backend", `Unknown backend ${describe(backend)}; available: ${BACKENDS.join(", ")}`);
  }
  const open = await OPEN[backend as BackendName]();
  if (raw.backend !== undefined) return open(raw);
  try {
    return await open(raw);
  } catch (error) {
    throw await blameMissingBackend(error, raw);
  }
}

/** The option names of every backend but the default, read only when a config without `backend` is refused. */
const OTHER_KEYS: { readonly [Name in Exclude<BackendName, "local">]: () => Promise<readonly string[]> } = {
  docker: async () => (await import("./docker/config.js")).DOCKER_KEYS,
  ssh: async () => (await import("./ssh/config.js")).SSH_KEYS,
  apptainer: async () => (await import("./apptainer/config.js")).APPTAINER_KEYS,
  modal: async () => (await import("./modal/config.js")).MODAL_KEYS,
  daytona: async () => (await import("./daytona/config.js")).DAYTONA_KEYS,
  gateway: async () => (await import("./gateway/config.js")).GATEWAY_KEYS,
};

/**
 * A config without `backend` runs on the local backend, which refuses an
 * option of another one (`host`): the mistake is the missing `backend`, so
 * the error says which backends take the option and how to name one.
 */
async function blameMissingBackend(error: unknown, raw: Record<string, unknown>): Promise<unknown> {
  if (!(error instanceof InvalidOptionError) || !error.message.startsWith("Unknown local backend option")) return error;
  const key = error.option;
  const takers: string[] = [];
  for (const [name, keys] of Object.entries(OTHER_KEYS)) if ((await keys()).includes(key)) takers.push(name);
  if (takers.length === 0 || !(key in raw)) return error;
  const names =
    takers.length === 1
      ? `the ${takers[0]} backend`
      : `the ${takers.slice(0, -1).join(", ")} and ${takers.at(-1)} backends`;
  return new InvalidOptionError(
    key,
    `${describe(key)} is an option of ${names}, but the config names no "backend" and the default, local, takes no ${describe(key)}; add "backend": ${JSON.stringify(takers[0])}${takers.length > 1 ? " (or another of those)" : ""}`,
  );
}
