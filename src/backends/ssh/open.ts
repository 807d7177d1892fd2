/**
 * Opens an SSH session: bash on a remote host over one private master
 * connection, starting in the remote user's home.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { normalizeSshConfig } from "./config.js";
import { SshTransport } from "./transport.js";

export function openSsh(raw: Record<string, unknown>): Promise<Environment> {
  const transport = new SshTransport(normalizeSshConfig(raw, warningSink(raw)));
  return Session.open(transport, sessionOptions(raw, "~"));
}
