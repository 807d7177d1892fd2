/** A named local session (its record's `named`): its state dir is the store's directory for it. */

import type { NamedSessionPolicy } from "../shared/named-policy.js";

export const localNamed: NamedSessionPolicy = {
  // Its background jobs and files wait for `shellwright close NAME`, not for this process.
  create: (config, _name, dir) => ({ ...config, stateDir: dir, outliveOwner: true }),
  // (outliveOwner: sessions stored before the option existed must not end with this process either.)
  reopen: (config, dir) => ({ ...config, stateDir: dir, outliveOwner: true }),
  // The state dir is found again by name.
  remember: (config) => {
    const rest = { ...config };
    delete rest.stateDir;
    return rest;
  },
};
