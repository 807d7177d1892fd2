/**
 * The `docker run` arguments for a session container, from the validated
 * config: a pure function, so every flag can be checked without an engine.
 */

import { hostname } from "node:os";
import type { DockerTransportOptions } from "./config.js";
import { DOCKER_LABEL, KEEP_LABEL, OWNER_LABEL } from "./labels.js";

/** Every shellwright container carries this label; listing and reaping go by it. */

/** The `docker run` arguments for a new session container (the CLI's argv after `docker`). */
export function dockerRunArgs(options: DockerTransportOptions, name: string): string[] {
  const args = ["run", "-d", "--name", name];
  if (options.init) args.push("--init");
  const labels: Record<string, string> = {
    ...options.labels,
    [DOCKER_LABEL]: "1",
    [KEEP_LABEL]: options.keepContainer ? "1" : "0",
    [OWNER_LABEL]: `${hostname()}/${process.pid}`,
  };
  for (const [key, value] of Object.entries(labels)) args.push("--label", `${key}=${value}`);
  if (options.dropCapabilities) args.push("--cap-drop", "ALL");
  for (const cap of options.capAdd) args.push("--cap-add", cap);
  if (options.noNewPrivileges) args.push("--security-opt", "no-new-privileges");
  if (options.pidsLimit !== undefined) args.push("--pids-limit", String(options.pidsLimit));
  if (options.cpus !== undefined) args.push("--cpus", String(options.cpus));
  // Docker reads the `m` suffix as MiB.
  if (options.memoryMiB !== undefined) args.push("--memory", `${options.memoryMiB}m`);
  if (options.diskMiB !== undefined) args.push("--storage-opt", `size=${options.diskMiB}m`);
  if (!options.network) args.push("--network", "none");
  // Loopback only: a server in the session is this machine's to reach, not its network's.
  for (const port of options.ports) args.push("-p", `127.0.0.1::${port}`);
  if (options.runAsHostUser) args.push("--user", `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`);
  if (options.mountCwd !== undefined) args.push("-v", `${options.mountCwd}:/workspace`);
  for (const volume of options.volumes) args.push("-v", volume);
  args.push(...options.extraArgs, options.image, "sleep", "infinity");
  return args;
}
