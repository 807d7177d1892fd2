/** A one-off command on the host over the session's master (`SshTransport.exec`), and what it returns. */

import { spawn } from "node:child_process";
import { SpawnError } from "../../core/errors.js";

export interface ExecOptions {
  stdin?: string | Buffer | undefined;
  timeoutMs?: number;
}

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs ssh with `args` and collects its output; killed after `timeoutMs` (said on its stderr). */
export function spawnCollect(
  sshPath: string,
  args: string[],
  stdin: string | Buffer | undefined,
  timeoutMs: number,
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(sshPath, args, {
      stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    child.stderr!.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    if (stdin !== undefined) {
      child.stdin!.on("error", () => undefined);
      child.stdin!.end(stdin);
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      stderr += `\n(gave up after ${timeoutMs} ms)`;
    }, timeoutMs);
    child.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const hint = error.code === "ENOENT" ? " (install the OpenSSH client, e.g. apt-get install openssh-client)" : "";
      reject(
        new SpawnError(`Could not run ${sshPath}: ${error.message}${hint}`, {
          cause: error,
          backend: "ssh",
        }),
      );
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 255, stdout, stderr });
    });
  });
}
