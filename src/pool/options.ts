/**
 * The pool's own options, and the backend options a pool cannot honour,
 * checked once when the pool is created (never per member), each error
 * naming the option and its value.
 */

import { InvalidOptionError } from "../core/errors.js";
import { describe, plainObject, positiveInteger, positiveNumber, rejectUnknown } from "../core/options.js";
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
 * not see: a kept or named container, a named sandbox, a given state dir,
 * processes that outlive the session. Everything else is the backend's to check.
 */
const SHARED: readonly { key: string; why: string }[] = [
  { key: "containerName", why: "every member needs a container of its own" },
  { key: "keepContainer", why: "a released member's container is removed, never kept" },
  { key: "stateDir", why: "every member needs a state directory of its own" },
  { key: "outliveOwner", why: "a pool's members end with their owner" },
  { key: "name", why: "every member needs a sandbox of its own, not one resumed by name" },
];

export function rejectSharedConfig(config: Record<string, unknown>): void {
  const labels = config.labels;
  if (typeof labels === "object" && labels !== null && Object.keys(labels).length > 0) {
    throw new InvalidOptionError(
      "labels",
      "A pool cannot use labels: every member needs a sandbox of its own, not one resumed by label",
    );
  }
  if (config.onClose !== undefined && config.onClose !== "delete") {
    throw new InvalidOptionError(
      "onClose",
      `A pool cannot use onClose ${describe(config.onClose)}: a released member is deleted, never kept`,
    );
  }
  for (const { key, why } of SHARED) {
    const value = config[key];
    if (value === undefined || value === false) continue;
    throw new InvalidOptionError(key, `A pool cannot use ${key} ${describe(value)}: ${why}`);
  }
}
