/** A named ssh session (its record's `named`): its snapshot stays in the directory it made on the host. */

import { dirname } from "node:path";
import type { NamedSessionPolicy } from "../shared/named-policy.js";

export const sshNamed: NamedSessionPolicy = {
  create: (config) => ({ ...config, outliveOwner: true }),
  reopen: (config) => ({ ...config, outliveOwner: true }),
  remember: (config, env) => ({ ...config, remoteTempDir: dirname(env.paths.snapshot) }),
};
