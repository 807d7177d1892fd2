/**
 * What a Daytona session learns of its sandbox when it opens a process
 * session there (at start, and after a restart): whether `timeout` and
 * `tail --pid` exist, and a private directory (mode 700) of its own for
 * stdin files and output copies, which may hold secrets.
 */

import { BackendUnavailableError } from "../../core/errors.js";
import { shellQuote } from "../../core/script.js";
import { TAIL_PID_PROBE } from "../shared/sandbox-command.js";
import type { DaytonaSandbox } from "./sdk.js";

const PROBE_TIMEOUT_SEC = 30;

export interface SandboxProbe {
  privateDir: string;
  hasTimeout: boolean;
  /** GNU tail's --pid: the exact output copy is possible (sandboxCommand). */
  hasTailPid: boolean;
}

/** `previousDir`: the session's directory before, removed (a restarted sandbox keeps its /tmp). */
export async function probeSandbox(sandbox: DaytonaSandbox, previousDir: string | undefined): Promise<SandboxProbe> {
  const previous = previousDir === undefined ? "" : `rm -rf -- ${shellQuote(previousDir)}; `;
  const probe = await sandbox.process.executeCommand(
    `${previous}umask 077; d=$(mktemp -d "\${TMPDIR:-/tmp}/shellwright-daytona-XXXXXXXX") && echo "dir=$d"; ` +
      `command -v timeout >/dev/null 2>&1 && echo timeout; ${TAIL_PID_PROBE}`,
    undefined,
    undefined,
    PROBE_TIMEOUT_SEC,
  );
  const lines = probe.result.split("\n").map((line) => line.trim());
  const privateDir = lines.find((line) => line.startsWith("dir=/"))?.slice("dir=".length);
  if (privateDir === undefined)
    throw new BackendUnavailableError(
      `Could not make the session's private directory in Daytona sandbox ${sandbox.id}: ${probe.result.trim().slice(0, 200)}`,
      { backend: "daytona" },
    );
  return { privateDir, hasTimeout: lines.includes("timeout"), hasTailPid: lines.includes("tail-pid") };
}
