/**
 * The pool's own options, and the backend options a pool cannot honour,
 * checked once when the pool is created (never per member), each error
 * naming the option and its value.
 */

import { InvalidOptionError } from "../core/errors.js";
import { describe, plainObject, positiveInteger, positiveNumber, rejectUnknown } from "../core/options.js";
import { poolRefusal } from "../backends/index.js";
import { writeStderr } from "../core/stderr.js";

export interface PoolOptions {
  /** Sessions kept opened ahead, ready to hand out. */
  size: number;
  /** Members opened at once while refilling. @default 1 */
  refillConcurrency?: number;
  /** Limit for the check a member passes before it is handed out. @default 10 000 */
  checkTimeoutMs?: number;
  /** Receives the pool's warnings (a member that could not be opened, one found dead). @default stderr */
  onWarning?: (message: string) => void;
}

export interface NormalizedPoolOptions {
  size: number;
  refillConcurrency: number;
  checkTimeoutMs: number;
  onWarning: (message: string) => void;
}

/** More would be a mistake, not a pool: every member is a live session with its processes. */
export const MAX_POOL_SIZE = 256;

const KEYS = ["size", "refillConcurrency", "checkTimeoutMs", "onWarning"] as const;

export function normalizePoolOptions(raw: unknown): NormalizedPoolOptions {
  const options = plainObject("pool options", raw);
  rejectUnknown("pool", options, KEYS);
  if (options.size === undefined)
    throw new InvalidOptionError("size", "size is required: how many sessions to keep opened ahead");
  const size = positiveInteger("size", options.size, 1);
  if (size > MAX_POOL_SIZE) {
    throw new InvalidOptionError("size", `size must be at most ${MAX_POOL_SIZE}, got ${describe(size)}`);
  }
  const refillConcurrency = positiveInteger("refillConcurrency", options.refillConcurrency, 1);
  const checkTimeoutMs = positiveNumber("checkTimeoutMs", options.checkTimeoutMs, 10_000);
  if (options.onWarning !== undefined && typeof options.onWarning !== "function") {
    throw new InvalidOptionError("onWarning", `onWarning must be a function, got ${describe(options.onWarning)}`);
  }
  const onWarning =
    (options.onWarning as ((message: string) => void) | undefined) ??
    ((message: string) => writeStderr(`shellwright pool: ${message}\n`));
  return { size, refillConcurrency, checkTimeoutMs, onWarning };
}

/**
 * Backend options that would make members share what a fresh session must
 * not see, as the config's backend declares them (its record's `poolRefuses`).
 * Everything else is the backend's to check.
 */
export function rejectSharedConfig(config: Record<string, unknown>): void {
  const refused = poolRefusal(config);
  if (refused === undefined) return;
  throw new InvalidOptionError(
    refused.key,
    `A pool cannot use ${refused.key} ${describe(refused.value)}: ${refused.why}`,
  );
}
