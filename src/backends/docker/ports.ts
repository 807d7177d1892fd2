/**
 * A URL for a port of the session's container: the host port the engine
 * published it on (`ports`, which publishes on 127.0.0.1 only, or a `-p` in
 * extraArgs), read from the container's inspect data.
 */

import type { PortUrl } from "../../core/environment.js";
import { UnsupportedError } from "../../core/errors.js";
import type { DockerContainer } from "./container.js";
import type { EngineApi } from "./engine.js";

interface Inspect {
  HostConfig?: { NetworkMode?: string };
  NetworkSettings?: { Ports?: Record<string, { HostIp?: string; HostPort?: string }[] | null> | null };
}

export async function publishedPortUrl(engine: EngineApi, container: DockerContainer, port: number): Promise<PortUrl> {
  const response = await engine.request("GET", `/containers/${container.id}/json`);
  const info = (response.status === 200 ? response.json : undefined) as Inspect | undefined;
  const binding = info?.NetworkSettings?.Ports?.[`${port}/tcp`]?.find(
    (b) => b.HostPort !== undefined && b.HostPort !== "",
  );
  if (binding === undefined) {
    const why =
      info?.HostConfig?.NetworkMode === "none"
        ? "the container has no network (network: false)"
        : `port ${port} of the container ${container.name} is not published: add it to the docker backend's ports option (ports: [${port}]), which publishes it on this machine's 127.0.0.1`;
    throw new UnsupportedError(`No URL for port ${port}: ${why}`, { backend: "docker" });
  }
  const ip = binding.HostIp ?? "";
  const host = ip === "" || ip === "0.0.0.0" ? "127.0.0.1" : ip === "::" ? "[::1]" : ip.includes(":") ? `[${ip}]` : ip;
  return { url: `http://${host}:${binding.HostPort}`, headers: {} };
}
