/**
 * Variables a client sent (a sandbox's envVars, a process's envs) as the
 * API echoes them (GET /envs, List): the gateway's token masked in names and
 * values, as in everything else a sandbox sends back, so a copy of it that
 * found its way into a variable is not handed out again.
 */

import type { TokenMask } from "../token-mask.js";

export function maskedEnvs(
  envs: Readonly<Record<string, string>>,
  mask: TokenMask | undefined,
): Record<string, string> {
  if (mask === undefined) return { ...envs };
  return Object.fromEntries(Object.entries(envs).map(([name, value]) => [mask.mask(name), mask.mask(value)]));
}
