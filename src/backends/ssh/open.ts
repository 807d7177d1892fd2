/**
 * Opens an SSH session: bash on a remote host over one private master
 * connection, starting in the remote user's home.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { SnapshotCheckpoints } from "../shared/snapshot-checkpoints.js";
import { normalizeSshConfig } from "./config.js";
import { SshTransport } from "./transport.js";

export async function openSsh(raw: Record<string, unknown>): Promise<Environment> {
  return (await open(raw)).env;
}

async function open(raw: Record<string, unknown>): Promise<{ env: Environment; transport: SshTransport }> {
  const transport = new SshTransport(normalizeSshConfig(raw, warningSink(raw)));
  transport.checkpoints = new SnapshotCheckpoints({
    transport,
    endProcesses: () => transport.endProcesses(),
    // A fork's child: the same host and config, a session of its own that ends with its owner.
    openChild: (cwd) => open({ ...raw, cwd, resume: undefined, outliveOwner: undefined }),
  });
  return { env: await Session.open(transport, sessionOptions(raw, "~")), transport };
}
