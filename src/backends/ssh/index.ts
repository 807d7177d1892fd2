/** The ssh backend: bash on a remote host over one private master connection. */

import type { BackendModule } from "../shared/backend-module.js";
import { SSH_KEYS, SSH_POOL_REFUSED, SSH_REQUIRED } from "./config.js";
import { sshLeftovers } from "./leftovers.js";
import { sshNamed } from "./named.js";

export const sshBackend: BackendModule = {
  open: async (raw) => (await import("./open.js")).openSsh(raw),
  keys: SSH_KEYS,
  required: SSH_REQUIRED,
  named: sshNamed,
  leftovers: sshLeftovers,
  poolRefuses: SSH_POOL_REFUSED,
  sharesHostFiles: false,
};
