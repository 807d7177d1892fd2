/**
 * The host's runtime directories, which every sandbox hides.
 *
 * A read-only bind does not stop connect() on a Unix socket, and the host's
 * daemons keep theirs in /run (/var/run) and $XDG_RUNTIME_DIR: the Docker
 * Engine's (root on the host), containerd's, dbus's, another session's
 * proxy. So these directories are covered with an empty tmpfs, and only what
 * the session needs is bound back over it: its own state dir and proxy
 * socket, `writable` paths (a socket a user wants reachable goes there), and
 * the file /etc/resolv.conf points to when it lives in one of them
 * (systemd-resolved), so that `network: "host"` still resolves names.
 * /tmp and /dev are already the sandbox's own.
 */

import { existsSync, realpathSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";

export interface HostRuntime {
  /** Real paths of the directories to hide, none inside another. */
  hidden: string[];
  /** Files to bind back read-only over the hidden directories. */
  bindBack: string[];
}

export function hostRuntime(env: NodeJS.ProcessEnv = process.env): HostRuntime {
  const candidates = ["/run", "/var/run", env.XDG_RUNTIME_DIR ?? ""];
  const real = new Set<string>();
  for (const path of candidates) {
    if (path === "" || !isAbsolute(path) || !existsSync(path)) continue;
    const resolved = realpathSync(path);
    if (statSync(resolved).isDirectory() && !within(resolved, ["/tmp", "/dev", "/"])) real.add(resolved);
  }
  const hidden = outermost([...real]);
  const bindBack: string[] = [];
  try {
    const resolv = realpathSync("/etc/resolv.conf");
    if (within(resolv, hidden) && statSync(resolv).isFile()) bindBack.push(resolv);
  } catch {
    // no resolv.conf, or it points nowhere: nothing to bind back
  }
  return { hidden, bindBack };
}

/** The paths that are not inside another of them: covering a dir covers what is inside it. */
export function outermost(paths: string[]): string[] {
  const unique = [...new Set(paths)];
  return unique.filter((path) => !unique.some((other) => other !== path && within(path, [other])));
}

/** True when `path` is one of `dirs` or inside one ("/" only as itself). */
function within(path: string, dirs: string[]): boolean {
  return dirs.some((dir) => path === dir || (dir !== "/" && path.startsWith(`${dir}/`)));
}
