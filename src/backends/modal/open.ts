/**
 * Opens a Modal session: bash in a Modal sandbox, starting in its home.
 * The `modal` SDK is loaded only when the first sandbox is created.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { normalizeModalConfig } from "./config.js";
import { ModalTransport } from "./transport.js";

export function openModal(raw: Record<string, unknown>): Promise<Environment> {
  const transport = new ModalTransport(normalizeModalConfig(raw, warningSink(raw)));
  return Session.open(transport, sessionOptions(raw, "~"));
}
