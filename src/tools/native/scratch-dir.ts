/**
 * A private directory per session, inside the backend, for what the native
 * tools keep between two commands (a command's stderr until it is read, the
 * shell state the bash tool restarts to). It sits next to the session's
 * snapshot, which may be a shared /tmp, so it is made mode 0700 and checked
 * to be a real directory of this user before any use; it is removed when the
 * session closes.
 */

import { posix } from "node:path";
import type { Environment } from "../../core/environment.js";
import { shellQuote } from "../../core/script.js";
import { BackendIoError } from "../shared/backend-io.js";

const made = new WeakMap<Environment, Promise<string>>();

export function scratchDir(session: Environment): Promise<string> {
  let dir = made.get(session);
  if (dir === undefined) {
    dir = make(session);
    made.set(session, dir);
    dir.catch(() => made.delete(session));
  }
  return dir;
}

async function make(session: Environment): Promise<string> {
  const dir = `${posix.dirname(session.paths.snapshot)}/shellwright-native-${session.id}`;
  const q = shellQuote(dir);
  const result = await session.execute(
    `builtin umask 077; command mkdir -p -- ${q}; [ -d ${q} ] && [ ! -L ${q} ] && [ -O ${q} ] && command chmod 700 -- ${q}`,
    { isolated: true, cwd: "/" },
  );
  if (result.exitCode !== 0) {
    throw new BackendIoError(`could not make the private directory ${dir} on the backend: ${result.output.trim()}`);
  }
  session.beforeClose(async () => {
    await session.execute(`command rm -rf -- ${q}`, { isolated: true, cwd: "/" }).catch(() => undefined);
  });
  return dir;
}
