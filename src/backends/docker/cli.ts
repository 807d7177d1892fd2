/**
 * The `docker` CLI, for the rare lifecycle calls (create, list, remove): it
 * accepts the user's own `docker run` arguments as they would type them.
 * Values that must stay secret never go on its command line.
 */

import { spawn } from "node:child_process";
import { BackendUnavailableError } from "../../core/errors.js";
import type { DockerCall } from "./engine.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** The docker executable. @default "docker" */
  dockerPath?: string | undefined;
  /** Receives each call before it is made. */
  trace?: ((call: DockerCall) => void) | undefined;
  /** @default 120000 (a `docker run` may have to unpack an image) */
  timeoutMs?: number | undefined;
  /** The engine's socket, as the backend's `socketPath`: the CLI talks to the same engine. @default the CLI's own (DOCKER_HOST, its context) */
  socketPath?: string | undefined;
}

export function runDockerCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const docker = options.dockerPath ?? "docker";
  options.trace?.({ via: "cli", argv: [docker, ...args] });
  return new Promise<CliResult>((resolve, reject) => {
    const env =
      options.socketPath === undefined ? process.env : { ...process.env, DOCKER_HOST: `unix://${options.socketPath}` };
    const child = spawn(docker, args, { stdio: ["ignore", "pipe", "pipe"], env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(
        new BackendUnavailableError(
          `Could not run ${docker} (${error.message}); install the docker CLI or set dockerPath`,
          { cause: error, backend: "docker" },
        ),
      );
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: code ?? (signal ? 128 + 9 : 1),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
  });
}
