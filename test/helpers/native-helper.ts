/**
 * Whether the fast path's helper was built here, and why a case that needs it
 * is skipped when it was not: a machine without a C compiler (or with
 * SHELLWRIGHT_HELPER_DIR pointing elsewhere) must still pass the suite
 * (issue 24.8), every call then taking the plain path.
 */

import { beforeEach, type TestContext } from "vitest";
import { localHelperPath, staticHelper } from "../../src/backends/shared/fast-path/helper-path.js";

const hint = "(npm run build makes it where a C compiler is; every call takes the plain path without it)";

/** Why a case needing the local helper cannot run here, or undefined when it can. */
export const noLocalHelper: string | undefined =
  localHelperPath() === undefined ? `no fast-path helper native/build/swmux-${process.arch} ${hint}` : undefined;

/** Why a case needing the static helper (copied into a container or onto a host) cannot run, or undefined. */
export const noStaticHelper: string | undefined =
  staticHelper() === undefined
    ? `no static fast-path helper native/build/swmux-${process.arch}-static ${hint}`
    : undefined;

/** Skips the running case, with the reason, when `reason` is set. */
export function skipUnless(context: TestContext, reason: string | undefined): void {
  if (reason !== undefined) context.skip(reason);
}

/** Skips every case of the enclosing describe, with the reason, when `reason` is set. */
export function skipAllUnless(reason: string | undefined): void {
  beforeEach((context) => skipUnless(context, reason));
}
