/**
 * A member is counted warm (idle, ready to hand out) only once its fast path
 * is ready: a session opens before its helper has started, and a caller
 * handed such a member would pay a plain-path first call (issue 25). The wait
 * is bounded by the pool's check timeout; a member whose fast path is off,
 * broken or slow still joins the pool after it, and its calls take the plain
 * path as any session's would.
 */

import type { Environment } from "../core/environment.js";
import { Session } from "../core/session.js";

export async function warmUp(member: Environment, timeoutMs: number): Promise<Environment> {
  // Only a Session has a fast path to wait for (a gateway's session is already as warm as it gets here).
  if (!(member instanceof Session)) return member;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  try {
    await Promise.race([member.whenFastPathReady().catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
  return member;
}
