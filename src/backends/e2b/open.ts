/**
 * Opens an e2b session: bash in an E2B sandbox (created, or connected to by
 * id), starting in its home. The `e2b` SDK is loaded only when the
 * first sandbox is needed.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { SnapshotCheckpoints } from "../shared/snapshot-checkpoints.js";
import { normalizeE2bConfig } from "./config.js";
import { E2bTransport } from "./transport.js";

export async function openE2b(raw: Record<string, unknown>): Promise<Environment> {
  return (await open(raw)).env;
}

async function open(raw: Record<string, unknown>): Promise<{ env: Environment; transport: E2bTransport }> {
  const transport = new E2bTransport(normalizeE2bConfig(raw, warningSink(raw)));
  // Checkpoints of the shell state (docs/branching.md); a fork's child is a new sandbox of its own, made from
  // the template, never the parent's sandbox connected to again, and killed at its close.
  transport.checkpoints = new SnapshotCheckpoints({
    transport,
    endProcesses: () => transport.endProcesses(),
    openChild: (cwd) => open({ ...raw, cwd, resume: undefined, sandboxId: undefined, onClose: undefined }),
  });
  return { env: await Session.open(transport, sessionOptions(raw, "~")), transport };
}
