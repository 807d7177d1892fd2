/** The modal backend: bash in a Modal sandbox (the `modal` SDK is loaded by `open`, on first use). */

import type { BackendModule } from "../shared/backend-module.js";
import { MODAL_KEYS } from "./config.js";

export const modalBackend: BackendModule = {
  open: async (raw) => (await import("./open.js")).openModal(raw),
  keys: MODAL_KEYS,
  sharesHostFiles: false,
};
