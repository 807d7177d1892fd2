/**
 * A URL for a port of a local session: this machine's loopback, the same
 * network the command's server listens on, unless a sandbox gave the session
 * a network namespace of its own, which nothing outside it can reach.
 */

import type { PortUrl } from "../../core/environment.js";
import { UnsupportedError } from "../../core/errors.js";
import type { SandboxOptions } from "./sandbox/config.js";

export function localPortUrl(port: number, sandbox: SandboxOptions | undefined): Promise<PortUrl> {
  if (sandbox !== undefined && sandbox.network !== "host") {
    return Promise.reject(
      new UnsupportedError(
        `No URL for port ${port}: the sandbox runs in a network namespace of its own (sandbox.network ${sandbox.network === "none" ? '"none"' : "{ allow }"}), which this machine cannot reach; a server the session must serve here needs sandbox.network "host"`,
        { backend: "local" },
      ),
    );
  }
  return Promise.resolve({ url: `http://localhost:${port}`, headers: {} });
}
