/**
 * Where the built fast-path helper is: native/build/swmux-<arch> in the
 * package (scripts/build-native.mjs builds it at `npm run build`), and its
 * static copy swmux-<arch>-static for systems whose libc is unknown (a
 * container). Absent when no C compiler (or static libc) was there: the fast
 * path is then unavailable and every call takes the plain path.
 * SHELLWRIGHT_HELPER_DIR, when set, is the directory looked in instead: a
 * package built elsewhere, or (set to a missing directory) a machine without
 * a C compiler, which the test suite must also pass on (issue 24.8).
 */

import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The helper for this machine's architecture, or undefined when it was not built or cannot run. */
export function localHelperPath(): string | undefined {
  return builtHelper(`swmux-${process.arch}`);
}

function builtHelper(name: string): string | undefined {
  const dir = process.env.SHELLWRIGHT_HELPER_DIR;
  // src/backends/shared/fast-path/ and dist/backends/shared/fast-path/ are both four levels below the package root.
  const path =
    dir !== undefined && dir !== ""
      ? join(dir, name)
      : fileURLToPath(new URL(`../../../../native/build/${name}`, import.meta.url));
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return undefined;
  }
}

/**
 * The statically linked helper (native/build/swmux-<arch>-static), for hosts
 * whose libc may differ from this machine's, with the `uname -m` name of the
 * machines it runs on; undefined when it was not built.
 */
export function staticHelper(): { path: string; machine: string } | undefined {
  const machine = UNAME_MACHINE[process.arch];
  const path = builtHelper(`swmux-${process.arch}-static`);
  return machine === undefined || path === undefined ? undefined : { path, machine };
}

const UNAME_MACHINE: Partial<Record<string, string>> = { x64: "x86_64", arm64: "aarch64" };
