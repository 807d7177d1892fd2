/** The local backend: bash on this machine, optionally in a bubblewrap sandbox. */

import type { BackendModule } from "../shared/backend-module.js";
import { LOCAL_KEYS, LOCAL_POOL_REFUSED } from "./config.js";
import { localLeftovers } from "./leftovers.js";
import { localNamed } from "./named.js";
import { hideFromSandboxes } from "./sandbox/private-paths.js";
import { checkLocalStart } from "./start-check.js";

export const localBackend: BackendModule = {
  open: async (raw) => (await import("./open.js")).openLocal(raw),
  keys: LOCAL_KEYS,
  named: localNamed,
  leftovers: localLeftovers,
  poolRefuses: LOCAL_POOL_REFUSED,
  sharesHostFiles: true,
  checkStart: checkLocalStart,
  hideFromSandboxes,
};
