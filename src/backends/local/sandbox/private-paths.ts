/**
 * Shellwright's own files, which every sandbox hides whatever its options:
 * other sessions' state (a snapshot holds the session's variables, its
 * `env` secrets included) and the token of the server that runs the session.
 *
 * Where a session keeps its state by default is covered whole: the
 * directory (`$XDG_RUNTIME_DIR`, hidden with the runtime dirs; /dev/shm and
 * /tmp, the sandbox's own), tmpdir() when it is elsewhere, and
 * $SHELLWRIGHT_HOME (named sessions). A covered directory hides the sessions
 * that open after this one too. A state dir given explicitly elsewhere, and a
 * server's token file, are registered here by this process while they are in
 * use, and covered in every sandbox it starts afterwards.
 */

import { existsSync, realpathSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { shellwrightHome } from "../../shared/shellwright-home.js";

const registered = new Map<string, number>();

/** Hides `path` from every sandbox this process starts until the returned function is called. */
export function hideFromSandboxes(path: string): () => void {
  const real = existsSync(path) ? realpathSync(path) : path;
  registered.set(real, (registered.get(real) ?? 0) + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const count = (registered.get(real) ?? 1) - 1;
    if (count === 0) registered.delete(real);
    else registered.set(real, count);
  };
}

export interface PrivatePaths {
  /** Where sessions keep state: covered by an empty read-only dir before the session's own binds. */
  roots: string[];
  /** tmpdir() when it is not /tmp: covered by an empty writable one, as /tmp is ($TMPDIR still works). */
  scratch: string[];
  /** Registered files and directories, covered after the binds (a token file inside the cwd stays hidden). */
  paths: { path: string; directory: boolean }[];
}

/** What a sandbox whose own state dir is `stateDir` must hide. */
export function privatePaths(stateDir: string): PrivatePaths {
  const own = existsSync(stateDir) ? realpathSync(stateDir) : stateDir;
  const inside = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);
  const cover = (dir: string): string[] => {
    if (!existsSync(dir)) return [];
    const real = realpathSync(dir);
    // /tmp and /dev are the sandbox's own; "/" would hide everything.
    const skip = real === "/" || inside(real, "/tmp") || inside(real, "/dev") || !statSync(real).isDirectory();
    return skip ? [] : [real];
  };
  const paths: PrivatePaths["paths"] = [];
  for (const path of registered.keys()) {
    // Its own state dir, or a directory around it, stays visible: the session needs it.
    if (inside(own, path) || !existsSync(path)) continue;
    paths.push({ path, directory: statSync(path).isDirectory() });
  }
  return { roots: cover(shellwrightHome()), scratch: cover(tmpdir()), paths };
}
