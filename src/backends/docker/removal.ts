/**
 * Removing a session's container, retried while the engine cannot be reached.
 * An outage of a few seconds (dockerd restarting, a socket proxy cut) used to
 * fail a close() or a failed open's cleanup at once, and the container kept
 * running with nobody left to remove it. The removal is now tried again with
 * a growing pause, for REMOVE_RETRY_MS at most; an engine that refuses it
 * outright (it is not a connection problem) is not asked again.
 */

import { BackendUnavailableError } from "../../core/errors.js";
import { engineMessage, type EngineApi } from "./engine.js";

/** How long a removal is tried again while the engine cannot be reached. */
export const REMOVE_RETRY_MS = 10_000;
const FIRST_PAUSE_MS = 100;
const MOST_PAUSE_MS = 2_000;
/** One attempt's limit: a removal can take seconds on a loaded machine, but an engine that hangs is retried. */
const ATTEMPT_TIMEOUT_MS = 15_000;

/** Removes the container `idOrName` whatever its state; one that is not there counts as removed. */
export async function removeContainer(
  engine: EngineApi,
  idOrName: string,
  label: string,
  retryMs = REMOVE_RETRY_MS,
): Promise<void> {
  const giveUpAt = Date.now() + retryMs;
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, MOST_PAUSE_MS)) {
    let why: string;
    try {
      const response = await engine.request(
        "DELETE",
        `/containers/${encodeURIComponent(idOrName)}?force=true`,
        undefined,
        ATTEMPT_TIMEOUT_MS,
      );
      if (response.status === 204 || response.status === 404) return;
      why = engineMessage(response.text);
      // 409 is a removal already in progress, 5xx the engine's own trouble: both may clear. Anything else will not.
      if (response.status !== 409 && response.status < 500)
        throw new BackendUnavailableError(`Could not remove docker container ${label}: ${why}`, { backend: "docker" });
    } catch (error) {
      if (!(error instanceof BackendUnavailableError) || error.message.startsWith("Could not remove")) throw error;
      why = error.message;
    }
    if (Date.now() + pause > giveUpAt)
      throw new BackendUnavailableError(
        `Could not remove docker container ${label}: the engine could not do it for ${Math.round(retryMs / 1000)} s (${why}). ` +
          "It is removed when this process exits, or by `shellwright sessions --prune` once this process is gone.",
        { backend: "docker" },
      );
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
