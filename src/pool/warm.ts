/**
 * A member is counted warm (idle, ready to hand out) only once its fast path
 * is ready: a session opens before its helper has started, and a caller
 * handed such a member would pay a plain-path first call (issue 25). The wait
 * is bounded by the pool's check timeout; a member whose fast path is off,
 * broken or slow still joins the pool after it, and its calls take the plain
 * path as any session's would.
 *
 * A member whose helper was ready here and died while it waited is not
 * handed out (helperDiedSinceWarm): its next call would take the plain path
 * while the helper restarts, and a dead helper is what a removed container or
 * a dropped connection looks like first.
 */

import type { Environment } from "../core/environment.js";
import { Session } from "../core/session.js";

/** Each warm member's count of helper deaths when its fast path was found ready. */
const exitsWhenWarm = new WeakMap<Environment, number>();

export async function warmUp(member: Environment, timeoutMs: number): Promise<Environment> {
  // Only a Session has a fast path to wait for (a gateway's session is already as warm as it gets here).
  if (!(member instanceof Session)) return member;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
    timer.unref();
  });
  try {
    const ready = await Promise.race([member.whenFastPathReady().catch(() => false), timeout]);
    const exits = member.fastPathHelperExits();
    if (ready && exits !== undefined) exitsWhenWarm.set(member, exits);
  } finally {
    clearTimeout(timer);
  }
  return member;
}

/**
 * True when the member's helper was ready at warm-up and has died since. Asked
 * after the check call, which meets a helper that died unnoticed (its pipe
 * closed) and counts the death before it returns.
 */
export function helperDiedSinceWarm(member: Environment): boolean {
  const atWarm = exitsWhenWarm.get(member);
  return atWarm !== undefined && member instanceof Session && member.fastPathHelperExits() !== atWarm;
}
