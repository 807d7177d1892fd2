/** The docker backend: a long-running container, every command a `docker exec`. */

import type { BackendModule } from "../shared/backend-module.js";
import { DOCKER_KEYS, DOCKER_POOL_REFUSED, DOCKER_REQUIRED } from "./config.js";
import { dockerLeftovers } from "./leftovers.js";
import { dockerNamed } from "./named.js";

export const dockerBackend: BackendModule = {
  open: async (raw) => (await import("./open.js")).openDocker(raw),
  keys: DOCKER_KEYS,
  required: DOCKER_REQUIRED,
  named: dockerNamed,
  leftovers: dockerLeftovers,
  kept: {
    noun: "container",
    heading: "Docker containers labelled by Shellwright (`shellwright close NAME` removes one)",
    list: async (options) => (await import("./containers.js")).listDockerContainers(options),
    remove: async (names) => (await import("./containers.js")).removeDockerContainers(names),
  },
  poolRefuses: DOCKER_POOL_REFUSED,
  sharesHostFiles: false,
};
