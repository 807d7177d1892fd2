/** A named docker session (its record's `named`): a container of its own, kept until `close`. */

import type { NamedSessionPolicy } from "../shared/named-policy.js";

export const dockerNamed: NamedSessionPolicy = {
  create: (config, name) => ({ containerName: `shellwright-${name}`, keepContainer: true, ...config }),
  reopen: (config, _dir, forClose) => (forClose ? { ...config, keepContainer: false } : config),
};
