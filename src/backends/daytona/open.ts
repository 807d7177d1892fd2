/**
 * Opens a Daytona session: bash in a Daytona sandbox (created, or resumed by
 * name or label), starting in its home. `@daytonaio/sdk` is loaded only when
 * the first sandbox is needed.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { normalizeDaytonaConfig } from "./config.js";
import { DaytonaTransport } from "./transport.js";

export function openDaytona(raw: Record<string, unknown>): Promise<Environment> {
  const transport = new DaytonaTransport(normalizeDaytonaConfig(raw, warningSink(raw)));
  return Session.open(transport, sessionOptions(raw, "~"));
}
