/** The gateway backend: a session hosted by `shellwright serve`, reached over HTTP. */

import type { BackendModule } from "../shared/backend-module.js";
import { GATEWAY_KEYS, GATEWAY_REQUIRED } from "./config.js";

export const gatewayBackend: BackendModule = {
  open: async (raw) => (await import("./open.js")).openGateway(raw),
  keys: GATEWAY_KEYS,
  required: GATEWAY_REQUIRED,
  // Its server decides whether a call takes the fast path, so a one-command CLI process keeps it.
  named: { keepsFastPath: true },
  sharesHostFiles: false,
};
