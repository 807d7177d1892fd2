/**
 * Resource options spelled one way on every backend: memory is `memoryMiB`,
 * CPUs are `cpus`. The spellings some backends used before (`memoryMb`,
 * `cpu`, `memoryGiB`) still work, with a deprecation warning.
 */

import { InvalidOptionError } from "../../core/errors.js";
import { describe } from "../../core/options.js";

/** Which spelling of a renamed option the config used: validate `value` under `name`, so errors quote what the caller wrote. */
export interface Spelling {
  name: string;
  value: unknown;
  deprecated: boolean;
}

/**
 * Picks the current or the deprecated spelling of an option; warns about the
 * deprecated one, and refuses both at once (which one should win is a guess).
 */
export function spelling(
  raw: Record<string, unknown>,
  current: string,
  deprecated: string,
  warn: (message: string) => void,
  hint = "",
): Spelling {
  const value = raw[current];
  const old = raw[deprecated];
  if (old === undefined) return { name: current, value, deprecated: false };
  if (value !== undefined) {
    throw new InvalidOptionError(
      deprecated,
      `Pass ${current} or ${deprecated}, not both: ${deprecated} is the deprecated spelling of ${current} (got ${current} ${describe(value)} and ${deprecated} ${describe(old)})`,
    );
  }
  warn(`${deprecated} is deprecated; use ${current}${hint}`);
  return { name: deprecated, value: old, deprecated: true };
}

/** A CPU count: fractions allowed. */
export function optionalCpus(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new InvalidOptionError(name, `${name} must be a positive number of CPUs, got ${describe(value)}`);
  }
  return value;
}
