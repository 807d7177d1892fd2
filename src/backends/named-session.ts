/**
 * What a backend keeps for a named CLI session (`shellwright exec -s NAME`),
 * whose state must outlive the process that opened it: each backend declares
 * it in its own folder (`named.ts`); a backend that declares nothing keeps
 * its config as given. The CLI asks here and never switches on a backend's
 * name.
 */

import type { BackendName } from "./index.js";
import type { NamedSessionPolicy } from "./shared/named-policy.js";
import { localNamed } from "./local/named.js";
import { sshNamed } from "./ssh/named.js";
import { dockerNamed } from "./docker/named.js";

const POLICIES: Partial<Record<BackendName, NamedSessionPolicy>> = {
  local: localNamed,
  ssh: sshNamed,
  docker: dockerNamed,
  gateway: { keepsFastPath: true },
};

export type { NamedSessionPolicy };

export function namedSessionPolicy(backend: string | undefined): NamedSessionPolicy {
  return POLICIES[(backend ?? "local") as BackendName] ?? {};
}
