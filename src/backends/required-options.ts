/**
 * The options a backend cannot open without, each with a value a user would
 * put there, declared by each backend in its own config. The CLI asks here to
 * word a missing one for the command line, and never switches on a backend's
 * name.
 */

import type { BackendName } from "./index.js";
import { APPTAINER_REQUIRED } from "./apptainer/config.js";
import { DOCKER_REQUIRED } from "./docker/config.js";
import { GATEWAY_REQUIRED } from "./gateway/config.js";
import { SSH_REQUIRED } from "./ssh/config.js";

const REQUIRED: Partial<Record<BackendName, Readonly<Record<string, string>>>> = {
  ssh: SSH_REQUIRED,
  gateway: GATEWAY_REQUIRED,
  docker: DOCKER_REQUIRED,
  apptainer: APPTAINER_REQUIRED,
};

/** An example value for `option` when `backend` cannot open without it; undefined when it can. */
export function requiredOptionExample(backend: string, option: string): string | undefined {
  return REQUIRED[backend as BackendName]?.[option];
}
