/**
 * Opens an apptainer session: bash in an apptainer instance on this machine,
 * starting in the container's home.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions } from "../shared/config.js";
import { SnapshotCheckpoints } from "../shared/snapshot-checkpoints.js";
import { normalizeApptainerConfig } from "./config.js";
import { ApptainerTransport } from "./transport.js";

export async function openApptainer(raw: Record<string, unknown>): Promise<Environment> {
  return (await open(raw)).env;
}

async function open(raw: Record<string, unknown>): Promise<{ env: Environment; transport: ApptainerTransport }> {
  const transport = new ApptainerTransport(normalizeApptainerConfig(raw));
  transport.checkpoints = new SnapshotCheckpoints({
    transport,
    endProcesses: () => transport.endProcesses(),
    // A fork's child: an instance of its own with the same config, but without the parent's persistent
    // overlay (two instances cannot share one writable overlay): a child starts from the image.
    openChild: (cwd) => open({ ...raw, cwd, resume: undefined, overlay: undefined }),
  });
  return { env: await Session.open(transport, sessionOptions(raw, "~")), transport };
}
