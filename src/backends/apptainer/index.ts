/** The apptainer backend: bash in an apptainer instance on this machine. */

import type { BackendModule } from "../shared/backend-module.js";
import { APPTAINER_KEYS, APPTAINER_REQUIRED } from "./config.js";

export const apptainerBackend: BackendModule = {
  open: async (raw) => (await import("./open.js")).openApptainer(raw),
  keys: APPTAINER_KEYS,
  required: APPTAINER_REQUIRED,
  sharesHostFiles: false,
};
