/** Labelled containers whose owner died (backends/shared/leftover-source.ts). */

import { ownerAliveHere } from "../shared/owner.js";
import type { LeftoverSource } from "../shared/leftover-source.js";
import {
  listDockerContainers,
  liveState,
  reapDockerContainers,
  removeDockerContainers,
  type DockerContainerInfo,
} from "./containers.js";

const KIND = "docker-container";

export const dockerLeftovers: LeftoverSource = {
  // None when no engine answers.
  async find() {
    try {
      const all = await listDockerContainers({ timeoutMs: 5000 });
      return all
        .filter((c) => !c.keep && (!liveState(c.state) || !ownerAliveHere(c.owner)))
        .map((c) => ({ kind: KIND, what: c.name, owner: c.owner }));
    } catch {
      return [];
    }
  },
  // All at once: the engine is asked again, so a container whose owner came back is kept.
  async remove(found) {
    if (!found.some((l) => l.kind === KIND)) return [];
    const reaped = await reapDockerContainers({ timeoutMs: 30_000 }).catch(() => [] as DockerContainerInfo[]);
    return reaped.map((c) => ({ kind: KIND, what: c.name, owner: c.owner }));
  },
  // The container a docker named session's first command made.
  async removeUnfinished(name) {
    await removeDockerContainers([`shellwright-${name}`], { timeoutMs: 10_000 }).catch(() => []);
  },
};
