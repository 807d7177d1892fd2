/** The e2b backend: bash in an E2B sandbox, or one of an E2B-compatible platform (`e2b` is loaded by `open`, on first use). */

import type { BackendModule } from "../shared/backend-module.js";
import { E2B_KEYS, E2B_POOL_REFUSED } from "./config.js";

export const e2bBackend: BackendModule = {
  open: async (raw) => (await import("./open.js")).openE2b(raw),
  keys: E2B_KEYS,
  poolRefuses: E2B_POOL_REFUSED,
  sharesHostFiles: false,
};
