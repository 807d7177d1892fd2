/**
 * Opens a local session: bash on this machine, starting in this process's cwd.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions } from "../shared/config.js";
import { normalizeLocalConfig } from "./config.js";
import { LocalTransport } from "./transport.js";

export function openLocal(raw: Record<string, unknown>): Promise<Environment> {
  const local = normalizeLocalConfig(raw);
  const options = sessionOptions(raw, process.cwd());
  const transport = new LocalTransport({ ...local, cwd: options.cwd });
  return Session.open(transport, options);
}
