/**
 * The helper that allocates pseudo-terminals (`swmux -p`, native/pty.c),
 * copied into the backend once per session through `Environment.execute`'s
 * byte-exact stdin. The tools see the session only through that contract, so
 * this works on every backend and on the plain path too (the fast path's own
 * copy lives behind each backend's transport, out of the contract's reach).
 * The copy is the static build for the backend's `uname -m`: its libc is not
 * known.
 */

import { readFile } from "node:fs/promises";
import { posix } from "node:path";
import type { Environment } from "../../core/environment.js";
import { ProcessError } from "../../core/errors.js";
import { shellQuote } from "../../core/script.js";
import { staticHelperFor } from "../../backends/index.js";
import type { PtySize } from "./background-process.js";
import type { PtyLaunch } from "./pty-scripts.js";

const installs = new WeakMap<Environment, Promise<string>>();

/** Where the session's copy lives inside the backend (removed with the session's processes). */
export const ptyHelperPath = (session: Environment): string =>
  `${posix.dirname(session.paths.snapshot)}/shellwright-pty-${session.id}-swmux`;

/** The helper's path inside the backend, copied there on first use. */
export function ptyHelper(session: Environment): Promise<string> {
  let install = installs.get(session);
  if (install === undefined) {
    install = installHelper(session);
    installs.set(session, install);
    // A failed copy is tried again next time (the helper may be built by then).
    install.catch(() => installs.delete(session));
  }
  return install;
}

/** How the helper starts a program under a PTY of `size` in this session, the helper copied in first. */
export async function ptyLaunch(session: Environment, size: PtySize, graceMs: number): Promise<PtyLaunch> {
  return {
    helper: await ptyHelper(session),
    cols: size.cols,
    rows: size.rows,
    graceMs,
    snapshot: session.snapshotReady ? session.paths.snapshot : undefined,
    ctl: undefined,
  };
}

/** True when this session's helper was copied in (so close() has a file to remove). */
export const ptyHelperInstalled = (session: Environment): boolean => installs.has(session);

const HOUSEKEEPING = { isolated: true, timeoutMs: 60_000 } as const;

async function installHelper(session: Environment): Promise<string> {
  const path = ptyHelperPath(session);
  const q = shellQuote(path);
  const probe = await session.execute(`command uname -m; [[ -x ${q} ]] && builtin echo __SW_HAVE`, HOUSEKEEPING);
  const machine = probe.output.split("\n")[0]?.trim() ?? "";
  if (probe.output.includes("__SW_HAVE")) return path;
  const helper = staticHelperFor(machine);
  if (helper === undefined) {
    throw new ProcessError(
      `pty=true needs the static helper native/build/swmux-<arch>-static for this backend's machine (uname -m: ${machine || "unknown"}), and it was not built: run \`npm run build\` where a C compiler and a static libc are.`,
    );
  }
  const bytes = await readFile(helper.path);
  const tmp = shellQuote(`${path}.tmp`);
  const copy = await session.execute(
    `(builtin umask 077 && command cat > ${tmp} && command chmod 700 ${tmp} && command mv -f ${tmp} ${q}) && ${q} -p 1 1 -- true 2>&1`,
    { ...HOUSEKEEPING, stdin: bytes },
  );
  if (copy.exitCode === 126) {
    // Copied, but exec was refused: a noexec mount (/dev/shm or /tmp in most containers).
    throw new ProcessError(
      `pty=true: the pseudo-terminal helper cannot run from the session's state directory ${posix.dirname(path)} (exit code 126: ${copy.output.trim().slice(0, 200)}): its filesystem does not allow running programs (mounted noexec). On the local backend, set the \`stateDir\` option (createEnvironment, or a --config file) to a directory where programs can run, e.g. under $HOME; a default state dir is chosen where they can. On other backends, the backend's temp directory must allow exec.`,
    );
  }
  if (copy.exitCode !== 0) {
    throw new ProcessError(
      `pty=true: the pseudo-terminal helper could not be installed or run in the backend at ${path} (exit code ${copy.exitCode}${copy.output.trim() ? `: ${copy.output.trim().slice(0, 300)}` : ""}); the directory may be mounted noexec, or full.`,
    );
  }
  return path;
}
