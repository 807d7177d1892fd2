/**
 * Opens an e2b session: bash in an E2B sandbox (created, or connected to by
 * id), starting in its home. The `e2b` SDK is loaded only when the
 * first sandbox is needed.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { openForkChildren, SandboxCheckpoints } from "../shared/sandbox-checkpoints.js";
import { SnapshotCheckpoints } from "../shared/snapshot-checkpoints.js";
import { normalizeE2bConfig, type E2bTransportOptions } from "./config.js";
import { E2bTransport, type E2bSandbox } from "./transport.js";

export async function openE2b(raw: Record<string, unknown>): Promise<Environment> {
  return (await open(raw)).env;
}

async function open(
  raw: Record<string, unknown>,
  forked?: E2bTransportOptions["forked"],
): Promise<{ env: Environment; transport: E2bTransport }> {
  const options = normalizeE2bConfig(raw, warningSink(raw));
  const transport = new E2bTransport({ ...options, forked });
  // A child is never the parent's sandbox connected to again, and is killed at its close.
  const childConfig = (cwd: string): Record<string, unknown> => ({
    ...raw,
    cwd,
    resume: undefined,
    sandboxId: undefined,
    onClose: undefined,
  });
  transport.checkpoints =
    options.checkpoints === "shell"
      ? // The shell state only (docs/branching.md): a child is a new sandbox from the template.
        new SnapshotCheckpoints({
          transport,
          endProcesses: () => transport.endProcesses(),
          openChild: (cwd) => open(childConfig(cwd)),
        })
      : // The whole sandbox: a checkpoint is E2B's snapshot, a rollback a new sandbox from it, the children E2B's forks.
        new SandboxCheckpoints<E2bSandbox>({
          transport,
          snapshot: () => transport.snapshotSandbox(),
          deleteSnapshot: (id) => transport.deleteSnapshot(id),
          boxFrom: (id) => transport.sandboxFromSnapshot(id),
          writeFile: (sandbox, path, bytes) => transport.writeInto(sandbox, path, bytes),
          dropBox: (sandbox) => transport.discard(sandbox),
          endProcesses: () => transport.endProcesses(),
          swapIn: (sandbox) => transport.swapIn(sandbox),
          forkMany: async (host, count, shell, signal) => {
            const sandboxes = await transport.forkSandboxes(count);
            const origin = transport.forkOrigin;
            let next = 0;
            try {
              return await openForkChildren(transport.name, count, shell, signal, () =>
                open(childConfig(host.cwd), { sandbox: sandboxes[next++]!, ...origin }),
              );
            } finally {
              // A sandbox no child adopted (the opening failed or was aborted first) goes too.
              await Promise.allSettled(sandboxes.slice(next).map((sandbox) => sandbox.kill()));
            }
          },
        });
  return { env: await Session.open(transport, sessionOptions(raw, "~")), transport };
}
