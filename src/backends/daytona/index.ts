/** The daytona backend: bash in a Daytona sandbox (`@daytonaio/sdk` is loaded by `open`, on first use). */

import type { BackendModule } from "../shared/backend-module.js";
import { DAYTONA_KEYS, DAYTONA_POOL_REFUSED } from "./config.js";

export const daytonaBackend: BackendModule = {
  open: async (raw) => (await import("./open.js")).openDaytona(raw),
  keys: DAYTONA_KEYS,
  poolRefuses: DAYTONA_POOL_REFUSED,
  sharesHostFiles: false,
};
