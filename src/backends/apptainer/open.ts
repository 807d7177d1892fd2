/**
 * Opens an apptainer session: bash in an apptainer instance on this machine,
 * starting in the container's home.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions } from "../shared/config.js";
import { normalizeApptainerConfig } from "./config.js";
import { ApptainerTransport } from "./transport.js";

export function openApptainer(raw: Record<string, unknown>): Promise<Environment> {
  return Session.open(new ApptainerTransport(normalizeApptainerConfig(raw)), sessionOptions(raw, "~"));
}
