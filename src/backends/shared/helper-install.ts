/**
 * The one installer of the helper (native/swmux.c) for a session whose fast
 * path has no copy of its own (the plain path, a gateway, a fast path that
 * could not copy it): the static build for the backend's `uname -m`, copied
 * into the session's state directory through `Environment.execute`'s
 * byte-exact stdin, so it works on every backend. Its libc is not known,
 * hence the static build. The copy is removed when the session closes.
 */

import { readFile } from "node:fs/promises";
import { posix } from "node:path";
import type { Environment } from "../../core/environment.js";
import { ProcessError } from "../../core/errors.js";
import { shellQuote } from "../../core/script.js";
import { staticHelperFor } from "./fast-path/helper-path.js";

const HOUSEKEEPING = { isolated: true, timeoutMs: 60_000 } as const;

/** Where the installer puts a session's copy inside the backend. */
export const installedHelperPath = (session: Environment): string =>
  `${posix.dirname(session.paths.snapshot)}/shellwright-helper-${session.id}-swmux`;

/** Copies the helper into the backend (once: the session remembers the path) and checks it runs there. */
export async function installHelperThroughExecute(session: Environment): Promise<string> {
  const path = installedHelperPath(session);
  const q = shellQuote(path);
  const probe = await session.execute(`command uname -m; [[ -x ${q} ]] && builtin echo __SW_HAVE`, HOUSEKEEPING);
  const machine = probe.output.split("\n")[0]?.trim() ?? "";
  if (probe.output.includes("__SW_HAVE")) return removedAtClose(session, path);
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
  return removedAtClose(session, path);
}

/** The copy goes with the session (a close hook runs while commands still work). */
function removedAtClose(session: Environment, path: string): string {
  session.beforeClose(async () => {
    await session.execute(`command rm -f -- ${shellQuote(path)}`, HOUSEKEEPING).catch(() => undefined);
  });
  return path;
}
