/** The backends that can leave something on this machine when their owner dies, each finding its own. */

import { dockerLeftovers } from "./docker/leftovers.js";
import { localLeftovers } from "./local/leftovers.js";
import type { LeftoverSource } from "./shared/leftover-source.js";
import { sshLeftovers } from "./ssh/leftovers.js";

export type { Leftover, LeftoverSource } from "./shared/leftover-source.js";

export const LEFTOVER_SOURCES: readonly LeftoverSource[] = [localLeftovers, sshLeftovers, dockerLeftovers];
