/**
 * Opens a Daytona session: bash in a Daytona sandbox (created, or resumed by
 * name or label), starting in its home. `@daytonaio/sdk` is loaded only when
 * the first sandbox is needed.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { SnapshotCheckpoints } from "../shared/snapshot-checkpoints.js";
import { normalizeDaytonaConfig } from "./config.js";
import { DaytonaTransport } from "./transport.js";

export async function openDaytona(raw: Record<string, unknown>): Promise<Environment> {
  return (await open(raw)).env;
}

async function open(raw: Record<string, unknown>): Promise<{ env: Environment; transport: DaytonaTransport }> {
  const transport = new DaytonaTransport(normalizeDaytonaConfig(raw, warningSink(raw)));
  transport.checkpoints = new SnapshotCheckpoints({
    transport,
    endProcesses: () => transport.endProcesses(),
    // A fork's child: a new sandbox (never one resumed by the parent's name or labels), deleted at its close.
    openChild: (cwd) =>
      open({ ...raw, cwd, resume: undefined, name: undefined, labels: undefined, onClose: undefined }),
  });
  return { env: await Session.open(transport, sessionOptions(raw, "~")), transport };
}
