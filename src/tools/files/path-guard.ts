/**
 * Where write_file and patch refuse to write: credential files, shell start-up
 * files and system directories, checked against the path as the *backend*
 * resolves it (symlinks followed, `~` its own home), plus an optional safe
 * root that confines every write.
 */

import { InvalidOptionError } from "../../core/errors.js";
import { describe } from "../../core/options.js";

/** Entries ending in `/` deny everything under them; `~/` is the backend user's home. */
export const DEFAULT_DENY_PATHS: readonly string[] = [
  "~/.ssh/",
  "~/.aws/",
  "~/.gnupg/",
  "~/.kube/",
  "~/.docker/",
  "~/.azure/",
  "~/.config/gh/",
  // Run at login or desktop start, or first on PATH: a write there runs code later.
  "~/.config/autostart/",
  "~/.local/bin/",
  // Git's settings (aliases, hooks path, credential helpers) and its stored credentials; ~/.config/git/ is the XDG place for both.
  "~/.gitconfig",
  "~/.git-credentials",
  "~/.config/git/",
  "~/.bashrc",
  "~/.bash_profile",
  "~/.bash_login",
  "~/.bash_logout",
  "~/.bash_aliases",
  "~/.profile",
  "~/.zshrc",
  "~/.zprofile",
  "~/.zshenv",
  "~/.netrc",
  "~/.pgpass",
  "~/.npmrc",
  "~/.pypirc",
  "/etc/",
  "/boot/",
  "/usr/lib/systemd/",
  "/var/run/docker.sock",
  "/run/docker.sock",
];

export interface WriteGuardOptions {
  /**
   * Paths never written (entries ending in `/` cover a whole directory; `~/` is the backend's home).
   * @default DEFAULT_DENY_PATHS
   */
  denyPaths?: readonly string[];
  /** When set, every write must land inside this directory (on the backend; `~` allowed). */
  safeRoot?: string;
}

export function validateGuardOptions(options: WriteGuardOptions): void {
  if (options.denyPaths !== undefined) {
    if (!Array.isArray(options.denyPaths))
      throw new InvalidOptionError(
        "denyPaths",
        `denyPaths must be an array of paths, got ${describe(options.denyPaths)}`,
      );
    for (const entry of options.denyPaths) {
      if (typeof entry !== "string" || !(entry.startsWith("/") || entry.startsWith("~/"))) {
        throw new InvalidOptionError(
          "denyPaths",
          `denyPaths entries must be absolute or start with ~/, got ${describe(entry)}`,
        );
      }
    }
  }
  if (options.safeRoot !== undefined && (typeof options.safeRoot !== "string" || options.safeRoot.trim() === "")) {
    throw new InvalidOptionError("safeRoot", `safeRoot must be a non-empty path, got ${describe(options.safeRoot)}`);
  }
}

const expandHome = (entry: string, home: string): string =>
  entry.startsWith("~/") ? `${home.replace(/\/$/, "")}/${entry.slice(2)}` : entry;

const under = (path: string, dir: string): boolean => {
  const prefix = dir.endsWith("/") ? dir : `${dir}/`;
  return path === prefix.slice(0, -1) || path.startsWith(prefix);
};

/**
 * The reason a write to `resolved` (absolute, symlink-free, on the backend) is refused, or undefined.
 * `resolvedRoot` is the safe root as the backend resolved it.
 */
export function writeDenied(
  resolved: string,
  home: string,
  options: WriteGuardOptions,
  resolvedRoot?: string,
): string | undefined {
  for (const entry of options.denyPaths ?? DEFAULT_DENY_PATHS) {
    const target = expandHome(entry, home);
    if (target.endsWith("/") ? under(resolved, target) : resolved === target) {
      return `Write denied: '${resolved}' is a protected system/credential file. Use the terminal if you really need to change it.`;
    }
  }
  if (resolvedRoot !== undefined && !under(resolved, resolvedRoot)) {
    return `Write denied: '${resolved}' is outside the allowed directory '${resolvedRoot}'.`;
  }
  return undefined;
}
