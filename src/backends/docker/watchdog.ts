/**
 * The owner watchdog of a session's container: removes it if this process dies without close(). A kept container
 * has none (it is meant to outlive the process), nor a session with no container yet.
 */

import { shellQuote } from "../../core/script.js";
import { OwnerWatchdog } from "../shared/owner-watchdog.js";
import type { DockerTransportOptions } from "./config.js";

export function containerWatchdog(options: DockerTransportOptions, containerId: string): OwnerWatchdog | undefined {
  if (options.keepContainer || containerId === "") return undefined;
  const docker = shellQuote(options.dockerPath ?? "docker");
  const socket = options.socketPath;
  return new OwnerWatchdog({
    cleanup: `${docker} rm -f ${shellQuote(containerId)} >/dev/null 2>&1`,
    ...(socket === undefined ? {} : { env: { DOCKER_HOST: `unix://${socket}` } }),
  });
}
