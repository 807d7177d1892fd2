/** What a test opens (a session, a gateway, a registry) closed after that test however it ends. */

import { afterEach } from "vitest";

/**
 * Returns `keep`: each value passed to it is closed with `close` after the test that kept it, the last kept
 * first, whether the test passed or failed.
 */
export function closeAfterEach<T>(close: (value: T) => Promise<unknown>): (value: T) => T {
  const kept: T[] = [];
  afterEach(async () => {
    for (const value of kept.splice(0).reverse()) await close(value);
  });
  return (value) => {
    kept.push(value);
    return value;
  };
}
