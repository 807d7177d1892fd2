/**
 * A URL for a port of the Daytona sandbox: its preview link. A private
 * sandbox's link wants the preview token in the `x-daytona-preview-token`
 * header; the token changes when the sandbox restarts, so it is asked for
 * each time, never kept.
 */

import type { PortUrl } from "../../core/environment.js";
import { BackendUnavailableError, UnsupportedError } from "../../core/errors.js";
import type { DaytonaSandbox } from "./sdk.js";

export async function daytonaPreviewUrl(port: number, sandbox: DaytonaSandbox): Promise<PortUrl> {
  if (sandbox.getPreviewLink === undefined)
    throw new UnsupportedError(`No URL for port ${port}: this Daytona client has no getPreviewLink`, {
      backend: "daytona",
    });
  let link: { url: string; token?: string | undefined };
  try {
    link = await sandbox.getPreviewLink(port);
  } catch (error) {
    throw new BackendUnavailableError(
      `Daytona gave no preview link for port ${port}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error, backend: "daytona" },
    );
  }
  return { url: link.url, headers: link.token ? { "x-daytona-preview-token": link.token } : {} };
}
