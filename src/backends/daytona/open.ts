/**
 * Opens a Daytona session: bash in a Daytona sandbox (created, or resumed by
 * name or label), starting in its home. `@daytonaio/sdk` is loaded only when
 * the first sandbox is needed.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { openForkChildren, SandboxCheckpoints } from "../shared/sandbox-checkpoints.js";
import { normalizeDaytonaConfig } from "./config.js";
import { writePrivateFile } from "./private-file.js";
import { DaytonaTransport, type DaytonaSandbox } from "./transport.js";

export async function openDaytona(raw: Record<string, unknown>): Promise<Environment> {
  return (await open(raw)).env;
}

async function open(
  raw: Record<string, unknown>,
  forked?: DaytonaSandbox,
): Promise<{ env: Environment; transport: DaytonaTransport }> {
  const transport = new DaytonaTransport({ ...normalizeDaytonaConfig(raw, warningSink(raw)), sandbox: forked });
  // Checkpoints hold the sandbox's whole filesystem as a Daytona snapshot; a fork's children are Daytona's
  // forks of the sandbox (docs/branching.md).
  transport.checkpoints = new SandboxCheckpoints<DaytonaSandbox>({
    transport,
    snapshot: async (id) => {
      const name = `shellwright-${id}`;
      await transport.snapshotSandbox(name);
      return name;
    },
    deleteSnapshot: (name) => transport.deleteSnapshot(name),
    boxFrom: (name) => transport.sandboxFromSnapshot(name),
    writeFile: (sandbox, path, bytes) => writePrivateFile(sandbox, transport.tempDir, path, bytes),
    dropBox: (sandbox) => transport.discard(sandbox),
    endProcesses: () => transport.endProcesses(),
    swapIn: (sandbox) => transport.swapIn(sandbox),
    forkMany: (host, count, shell, signal) =>
      openForkChildren(transport.name, count, shell, signal, async () => {
        const sandbox = await transport.forkSandbox();
        // A new sandbox, never one resumed by the parent's name or labels, deleted at its close.
        const child = {
          ...raw,
          cwd: host.cwd,
          resume: undefined,
          name: undefined,
          labels: undefined,
          onClose: undefined,
        };
        try {
          return await open(child, sandbox);
        } catch (error) {
          await transport.discard(sandbox).catch(() => undefined);
          throw error;
        }
      }),
  });
  return { env: await Session.open(transport, sessionOptions(raw, "~")), transport };
}
