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

/**
 * The helper for this machine's architecture, or undefined when it was not
 * built or cannot run. The static one serves too: a package packed on x64
 * carries only the static arm64 helper (cross-built), which an arm64 host
 * runs as well as a dynamic one.
 */
export function localHelperPath(): string | undefined {
  return builtHelper(`swmux-${process.arch}`) ?? builtHelper(`swmux-${process.arch}-static`);
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

/** A statically linked helper and the `uname -m` name of the machines it runs on. */
export interface StaticHelper {
  path: string;
  machine: string;
}

/**
 * The statically linked helper (native/build/swmux-<arch>-static) for this
 * machine's architecture, for hosts whose libc may differ from this one's;
 * undefined when it was not built.
 */
export function staticHelper(): StaticHelper | undefined {
  const machine = Object.keys(ARCH_OF_MACHINE).find((name) => ARCH_OF_MACHINE[name] === process.arch);
  return machine === undefined ? undefined : staticHelperFor(machine);
}

/** The static helper for a machine as `uname -m` names it (a container's, an ssh host's); undefined: none built. */
export function staticHelperFor(machine: string): StaticHelper | undefined {
  const arch = ARCH_OF_MACHINE[machine];
  const path = arch === undefined ? undefined : builtHelper(`swmux-${arch}-static`);
  return path === undefined ? undefined : { path, machine };
}

/** `uname -m` names (Linux says aarch64, some others arm64) to the helper's build names (Node's arch names). */
const ARCH_OF_MACHINE: Partial<Record<string, string>> = { x86_64: "x64", aarch64: "arm64", arm64: "arm64" };
