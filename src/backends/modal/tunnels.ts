/**
 * A URL for a port of the Modal sandbox: its public HTTPS tunnel. Modal opens
 * tunnels only for the ports named when the sandbox is created (the backend's
 * `ports` option, sent as `encryptedPorts`), so any other port has none.
 */

import type { PortUrl } from "../../core/environment.js";
import { BackendUnavailableError, UnsupportedError } from "../../core/errors.js";
import type { ModalSandbox } from "./sdk.js";

/** How long Modal may take to report a new sandbox's tunnels. */
const TUNNELS_TIMEOUT_MS = 50_000;

export async function modalTunnelUrl(
  port: number,
  declared: readonly number[],
  sandbox: ModalSandbox,
): Promise<PortUrl> {
  if (!declared.includes(port) || sandbox.tunnels === undefined)
    throw new UnsupportedError(
      `No URL for port ${port}: Modal tunnels only the ports declared when the sandbox is created; add it to the modal backend's ports option (ports: [${port}])`,
      { backend: "modal" },
    );
  let tunnels: Record<number, { url: string }>;
  try {
    tunnels = await sandbox.tunnels(TUNNELS_TIMEOUT_MS);
  } catch (error) {
    throw new BackendUnavailableError(
      `Modal did not report the sandbox's tunnels: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error, backend: "modal" },
    );
  }
  const tunnel = tunnels[port];
  if (tunnel === undefined)
    throw new BackendUnavailableError(`Modal reported no tunnel for port ${port} of sandbox ${sandbox.sandboxId}`, {
      backend: "modal",
    });
  return { url: tunnel.url, headers: {} };
}
