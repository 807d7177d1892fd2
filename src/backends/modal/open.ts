/**
 * Opens a Modal session: bash in a Modal sandbox, starting in its home.
 * The `modal` SDK is loaded only when the first sandbox is created.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { SnapshotCheckpoints } from "../shared/snapshot-checkpoints.js";
import { normalizeModalConfig } from "./config.js";
import { ModalTransport } from "./transport.js";

export async function openModal(raw: Record<string, unknown>): Promise<Environment> {
  return (await open(raw)).env;
}

async function open(raw: Record<string, unknown>): Promise<{ env: Environment; transport: ModalTransport }> {
  const transport = new ModalTransport(normalizeModalConfig(raw, warningSink(raw)));
  transport.checkpoints = new SnapshotCheckpoints({
    transport,
    endProcesses: () => transport.endProcesses(),
    // A fork's child: a sandbox of its own with the same config (the shell state only: no file is copied).
    openChild: (cwd) => open({ ...raw, cwd, resume: undefined }),
  });
  return { env: await Session.open(transport, sessionOptions(raw, "~")), transport };
}
