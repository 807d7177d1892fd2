/** What the ssh backend says when the host cannot be reached or the connection breaks (docs/ssh.md). */

import { BackendUnavailableError } from "../../core/errors.js";
import type { ExecResult } from "./exec.js";

/** The host could not be reached: the command did not run. */
export function unreachable(where: string, stderr: string): BackendUnavailableError {
  const detail = stderr.trim() ? `: ${stderr.trim().split("\n").slice(-3).join(" / ")}` : "";
  return new BackendUnavailableError(
    `Cannot reach ${where} over SSH${detail}. The command did not run; the next command tries to connect again.`,
    { backend: "ssh" },
  );
}

/** The connection broke `when`: the command's result is unknown. */
export function lost(where: string, stderr: string, when: string): BackendUnavailableError {
  const detail = stderr.trim() ? `: ${stderr.trim().split("\n").slice(-3).join(" / ")}` : "";
  return new BackendUnavailableError(
    `The SSH connection to ${where} was lost ${when}${detail}. The command's result is unknown; the next command reconnects.`,
    { backend: "ssh" },
  );
}

/** Why the session's first connection failed, with a hint at what to check. */
export function connectFailure(where: string, result: ExecResult): string {
  const stderr = result.stderr.trim();
  if (result.code === 127 && stderr.includes("bash is not installed"))
    return `SSH to ${where} works, but bash is not installed on the host; install bash there.`;
  let hint = "check host, port and network";
  if (/Permission denied|publickey/i.test(stderr))
    hint = "the host refused the key: check user and keyPath (BatchMode is on, so ssh never asks for a password)";
  else if (/Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/i.test(stderr))
    hint = "the host key is unknown or changed: check knownHostsFile or strictHostKeyChecking";
  else if (/Could not resolve hostname/i.test(stderr)) hint = "the host name does not resolve";
  return `SSH connection to ${where} failed (exit ${result.code}): ${stderr || "no message from ssh"} (${hint})`;
}
