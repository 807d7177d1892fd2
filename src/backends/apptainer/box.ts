/**
 * Programs in the Apptainer instance as the fast path needs them (BoxExec):
 * each is one `apptainer exec --cleanenv instance://NAME …` client, whose
 * stdin and stdout are the program's.
 */

import { spawn } from "node:child_process";
import type { BoxExec, BoxProcess } from "../shared/fast-path/box-helper.js";

export interface ApptainerClient {
  executable: string;
  instance: string;
  /** The client's own environment (cache and temp dirs; never the session's variables). */
  env: NodeJS.ProcessEnv;
}

const SHORT_EXEC_TIMEOUT_MS = 60_000;

export function apptainerBox(client: () => ApptainerClient): BoxExec {
  const start = (argv: string[]) => {
    const { executable, instance, env } = client();
    return spawn(executable, ["exec", "--cleanenv", `instance://${instance}`, ...argv], {
      stdio: ["pipe", "pipe", "pipe"],
      env,
    });
  };
  return {
    spawn: (argv): BoxProcess => {
      const child = start(argv);
      const closed = new Promise<void>((resolve) => {
        child.once("error", () => resolve());
        child.once("close", () => resolve());
      });
      const streams = [child.stdin, child.stdout, child.stderr];
      return {
        stdin: child.stdin,
        stdout: child.stdout,
        stderr: child.stderr,
        closed,
        stop: () => {
          child.stdin.end();
          child.kill("SIGKILL");
        },
        // An idle helper must not keep this process alive.
        hold: (busy) => {
          for (const stream of streams) {
            const handle = stream as unknown as { ref?: () => void; unref?: () => void };
            if (busy) handle.ref?.();
            else handle.unref?.();
          }
          if (busy) child.ref();
          else child.unref();
        },
      };
    },
    run: (argv, stdin) =>
      new Promise((resolve) => {
        const child = start(argv);
        const chunks: Buffer[] = [];
        child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
        child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
        child.stdin.on("error", () => undefined);
        child.stdin.end(stdin);
        const timer = setTimeout(() => child.kill("SIGKILL"), SHORT_EXEC_TIMEOUT_MS);
        child.once("error", (error) => {
          clearTimeout(timer);
          resolve({ exitCode: 127, output: error.message });
        });
        child.once("close", (code) => {
          clearTimeout(timer);
          resolve({ exitCode: code ?? 137, output: Buffer.concat(chunks).toString("utf8") });
        });
      }),
  };
}
