/**
 * Opens an e2b session: bash in an E2B sandbox (created, connected to by id,
 * or passed in), starting in its home. The `e2b` SDK is loaded only when the
 * first sandbox is needed.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { normalizeE2bConfig } from "./config.js";
import { E2bTransport } from "./transport.js";

export async function openE2b(raw: Record<string, unknown>): Promise<Environment> {
  const transport = new E2bTransport(normalizeE2bConfig(raw, warningSink(raw)));
  return Session.open(transport, sessionOptions(raw, "~"));
}
