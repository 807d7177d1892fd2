/**
 * Where the built fast-path helper is: native/build/swmux-<arch> in the
 * package (scripts/build-native.mjs builds it at `npm run build`). Absent
 * when no C compiler was there: the fast path is then unavailable and every
 * call takes the plain path.
 */

import { accessSync, constants } from "node:fs";
import { fileURLToPath } from "node:url";

/** The helper for this machine's architecture, or undefined when it was not built or cannot run. */
export function localHelperPath(): string | undefined {
  // src/backends/shared/fast-path/ and dist/backends/shared/fast-path/ are both four levels below the package root.
  const path = fileURLToPath(new URL(`../../../../native/build/swmux-${process.arch}`, import.meta.url));
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return undefined;
  }
}
