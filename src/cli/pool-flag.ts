/**
 * `--pool-size N` (serve, mcp --http): how many sessions the server keeps
 * opened ahead for the sessions it opens (docs/pools.md). Checked here, at
 * the entry point, so the message names the flag and its value.
 */

import { MAX_POOL_SIZE } from "../pool/options.js";
import { integerValue, stringValue, UsageError, type Values } from "./args.js";

export function poolSizeFlag(values: Values): number | undefined {
  const size = integerValue(values, "pool-size", 1);
  if (size !== undefined && size > MAX_POOL_SIZE) {
    throw new UsageError(
      `--pool-size must be at most ${MAX_POOL_SIZE}, got ${JSON.stringify(stringValue(values, "pool-size"))}`,
    );
  }
  return size;
}
