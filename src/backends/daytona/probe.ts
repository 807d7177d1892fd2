/**
 * What a Daytona session learns of its sandbox when it opens a process
 * session there (at start, and after a restart): whether `timeout` and
 * `tail --pid` exist, and a private directory (mode 700) of its own for
 * stdin files and output copies, which may hold secrets.
 */

import { BackendUnavailableError } from "../../core/errors.js";
import { sandboxProbe, sandboxProbeResult, type SandboxProbe } from "../shared/sandbox-command.js";
import type { DaytonaSandbox } from "./sdk.js";

const PROBE_TIMEOUT_SEC = 30;

export interface DaytonaProbe extends SandboxProbe {
  /** `timeout` exists: a call gets a server-side limit too. */
  hasTimeout: boolean;
}

/** `previousDir`: the session's directory before, removed (a restarted sandbox keeps its /tmp). */
export async function probeSandbox(sandbox: DaytonaSandbox, previousDir: string | undefined): Promise<DaytonaProbe> {
  const probe = await sandbox.process.executeCommand(
    `command -v timeout >/dev/null 2>&1 && echo timeout; ${sandboxProbe("daytona", previousDir)}`,
    undefined,
    undefined,
    PROBE_TIMEOUT_SEC,
  );
  const { privateDir, hasTailPid, lines } = sandboxProbeResult(probe.result);
  if (privateDir === undefined)
    throw new BackendUnavailableError(
      `Could not make the session's private directory in Daytona sandbox ${sandbox.id}: ${probe.result.trim().slice(0, 200)}`,
      { backend: "daytona" },
    );
  return { privateDir, hasTimeout: lines.includes("timeout"), hasTailPid };
}
