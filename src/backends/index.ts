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
  return open(raw);
}
