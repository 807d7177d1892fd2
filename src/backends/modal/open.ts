/**
 * Opens a Modal session: bash in a Modal sandbox, starting in its home.
 * The `modal` SDK is loaded only when the first sandbox is created.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions, warningSink } from "../shared/config.js";
import { openForkChildren, SandboxCheckpoints } from "../shared/sandbox-checkpoints.js";
import { normalizeModalConfig } from "./config.js";
import { ModalTransport, type ModalSandbox } from "./transport.js";

export async function openModal(raw: Record<string, unknown>): Promise<Environment> {
  return (await open(raw)).env;
}

async function open(raw: Record<string, unknown>): Promise<{ env: Environment; transport: ModalTransport }> {
  const transport = new ModalTransport(normalizeModalConfig(raw, warningSink(raw)));
  // Checkpoints and forks hold the sandbox's whole filesystem: Modal's image of it (docs/branching.md).
  transport.checkpoints = new SandboxCheckpoints<ModalSandbox>({
    transport,
    snapshot: () => transport.snapshotFilesystem(),
    deleteSnapshot: (imageId) => transport.deleteImage(imageId),
    boxFrom: (imageId) => transport.sandboxFromImage(imageId),
    writeFile: (sandbox, path, bytes) => transport.writeFileIn(sandbox, path, bytes),
    dropBox: (sandbox) => transport.discard(sandbox),
    endProcesses: () => transport.endProcesses(),
    swapIn: (sandbox) => transport.swapIn(sandbox),
    forkMany: async (host, count, shell, signal) => {
      // One image for every child; it is deleted once the fork and every child from it are done with it.
      const imageId = await transport.snapshotFilesystem();
      let holders = 1;
      const letGo = async (): Promise<void> => {
        if (--holders === 0) await transport.deleteImage(imageId).catch(() => undefined);
      };
      try {
        return await openForkChildren(transport.name, count, shell, signal, async () => {
          const child = await open({ ...raw, cwd: host.cwd, resume: undefined, image: imageId, addPython: false });
          holders++;
          child.transport.afterStop = letGo;
          return child;
        });
      } finally {
        await letGo();
      }
    },
  });
  return { env: await Session.open(transport, sessionOptions(raw, "~")), transport };
}
