/**
 * Says once, naming the reason, that sessions cannot use the fast path (no
 * helper built for the backend's architecture, a helper that exits before
 * its launcher is ready). Calls still run, on the plain path: slower, never
 * wrong, so a process warning and not an error. Once per reason per
 * process: a pool of a hundred sessions on an arm64 image says it once.
 */

/** The process warning's code, for hosts that filter them. */
export const FAST_PATH_WARNING = "SHELLWRIGHT_FAST_PATH";

const said = new Set<string>();

export function warnUnavailable(reason: string, warn: (message: string) => void = defaultWarn): void {
  if (said.has(reason)) return;
  said.add(reason);
  warn(`shellwright: no fast path: ${reason}; calls take the plain path`);
}

/** The reason when no static helper (the one copied into containers, boxes and ssh hosts) was built here. */
export const NO_STATIC_HELPER = `no static helper was built for ${process.arch} (npm run build needs a C compiler and static libc)`;

export function defaultWarn(message: string): void {
  process.emitWarning(message, { code: FAST_PATH_WARNING });
}
