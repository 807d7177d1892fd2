/**
 * Opens a local session: bash on this machine, starting in this process's cwd.
 */

import type { Environment } from "../../core/environment.js";
import { Session } from "../../core/session.js";
import { sessionOptions } from "../shared/config.js";
import { normalizeLocalConfig } from "./config.js";
import { LocalTransport } from "./transport.js";
import { LocalCheckpoints } from "./checkpoint.js";
import { OverlayCheckpoints } from "./sandbox/overlay-checkpoints.js";
import { normalizeWorkspace, type WorkspaceOptions } from "./workspace-config.js";

export function openLocal(raw: Record<string, unknown>): Promise<Environment> {
  const local = normalizeLocalConfig(raw);
  const workspace = normalizeWorkspace(raw);
  return open(raw, local, workspace, false);
}

function open(
  raw: Record<string, unknown>,
  local: ReturnType<typeof normalizeLocalConfig>,
  workspace: WorkspaceOptions | undefined,
  ownsWorkspace: boolean,
): Promise<Session> {
  const options = sessionOptions(raw, process.cwd());
  if (local.sandbox !== undefined && workspace !== undefined) {
    const transport = new LocalTransport({ ...local, cwd: options.cwd, workspace: workspace.root });
    transport.checkpoints = new OverlayCheckpoints(workspace, {
      stateDir: () => transport.tempDir,
      endProcesses: (restartFastPath) => transport.endProcesses(restartFastPath),
      prepareFastPath: (snapshot) => transport.fastPath?.prepare(snapshot),
      overlay: () => transport.sandbox?.overlay,
      pauseFastPath: () => transport.pauseFastPath(),
      resumeFastPath: () => transport.resumeFastPath(),
      openChild: () => Promise.reject(new Error("unreachable: a fork is refused before")),
    });
    return Session.open(transport, options);
  }
  const transport = new LocalTransport({ ...local, cwd: options.cwd });
  transport.checkpoints = new LocalCheckpoints(
    workspace,
    {
      stateDir: () => transport.tempDir,
      endProcesses: () => transport.endProcesses(),
      prepareFastPath: (snapshot) => transport.fastPath?.prepare(snapshot),
      openChild: (root, cwd) => openChild(raw, local, workspace, root, cwd),
    },
    ownsWorkspace,
  );
  return Session.open(transport, options);
}

/** A fork's child: the same config in its own state dir, its own copy of the workspace, from the parent's cwd. */
function openChild(
  raw: Record<string, unknown>,
  local: ReturnType<typeof normalizeLocalConfig>,
  workspace: WorkspaceOptions | undefined,
  root: string | undefined,
  cwd: string,
): Promise<Session> {
  return open(
    { ...raw, cwd, resume: undefined },
    { ...local, stateDir: undefined },
    root === undefined || workspace === undefined ? undefined : { ...workspace, root },
    root !== undefined,
  );
}
