/**
 * E2B ends a sandbox when its timeout passes: while a session holds one, its
 * timeout is set again every `intervalMs`, so a crashed process leaves the
 * sandbox behind for one timeout at most. A failed renewal is one warning
 * (until one succeeds again), never an error.
 */

import { messageOf } from "../shared/error-message.js";
import type { E2bSandbox } from "./sdk.js";

export function renewTimeoutEvery(
  sandbox: E2bSandbox,
  timeoutMs: number,
  intervalMs: number,
  warn: (message: string) => void,
): NodeJS.Timeout {
  let warned = false;
  const renewal = setInterval(() => {
    sandbox.setTimeout(timeoutMs).then(
      () => (warned = false),
      (error: unknown) => {
        if (warned) return;
        warned = true;
        warn(`Could not renew E2B sandbox ${sandbox.sandboxId}'s timeout: ${messageOf(error)}`);
      },
    );
  }, intervalMs);
  renewal.unref();
  return renewal;
}
