/**
 * The local backend's `sandbox` option: its public type, its validation (once,
 * when the environment is created) and the resolution of its paths (at open,
 * against the session's first cwd, because "." means the project the session
 * starts in, not wherever this process happens to run).
 */

import { existsSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { InvalidOptionError } from "../../../core/errors.js";
import { describe, shellString } from "../../../core/options.js";

export type SandboxNetwork = "none" | "host" | { allow: string[] };

export interface SandboxConfig {
  /** Paths the session may write (and create files in); everything else is read-only. @default ["."] (the cwd) */
  writable?: string[];
  /**
   * Paths the session may not read (directories are hidden behind an empty one,
   * files behind /dev/null). A list given here replaces the default list.
   * @default DEFAULT_DENY_READ
   */
  denyRead?: string[];
  /**
   * "none": a network namespace of its own with only a loopback (no way out);
   * "host": the host's network; `{ allow }`: only these names (`host` or
   * `host:port`) through an HTTP(S) proxy on the host. @default "none"
   */
  network?: SandboxNetwork;
}

/** The credential stores a command almost never needs and a leak would hurt most. */
export const DEFAULT_DENY_READ: readonly string[] = [
  "~/.ssh",
  "~/.aws",
  "~/.config/gcloud",
  "~/.azure",
  "~/.kube",
  "~/.docker",
  "~/.gnupg",
  "~/.netrc",
  "~/.git-credentials",
  "~/.config/gh",
  "~/.npmrc",
  "~/.pypirc",
];

/** The option, validated: paths still as given (they resolve at open). */
export interface SandboxOptions {
  writable: string[];
  denyRead: string[];
  network: "none" | "host" | { allow: AllowedName[] };
}

/** One entry of the allowlist; `port` undefined allows every port of the host. */
export interface AllowedName {
  host: string;
  port: number | undefined;
}

/** The option with every path absolute and real, ready for the bwrap argv. */
export interface ResolvedSandbox {
  writable: string[];
  /** Each denied path that exists, with its kind (a directory is covered differently from a file). */
  denyRead: { path: string; directory: boolean }[];
  network: SandboxOptions["network"];
}

const SANDBOX_KEYS = ["writable", "denyRead", "network"];

/** `sandbox: true` is the preset; false/undefined is no sandbox. */
export function normalizeSandbox(value: unknown): SandboxOptions | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return { writable: ["."], denyRead: [...DEFAULT_DENY_READ], network: "none" };
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidOptionError("sandbox", `sandbox must be true, false or an object, got ${describe(value)}`);
  }
  const raw = value as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!SANDBOX_KEYS.includes(key)) {
      throw new InvalidOptionError(
        `sandbox.${key}`,
        `Unknown sandbox option ${describe(key)}; known options: ${SANDBOX_KEYS.join(", ")}`,
      );
    }
  }
  return {
    writable: pathList("sandbox.writable", raw.writable, ["."]),
    denyRead: pathList("sandbox.denyRead", raw.denyRead, DEFAULT_DENY_READ),
    network: network(raw.network),
  };
}

function pathList(name: string, value: unknown, fallback: readonly string[]): string[] {
  if (value === undefined) return [...fallback];
  if (!Array.isArray(value))
    throw new InvalidOptionError(name, `${name} must be an array of paths, got ${describe(value)}`);
  return value.map((item, index) => shellString(`${name}[${index}]`, item));
}

function network(value: unknown): SandboxOptions["network"] {
  if (value === undefined || value === "none" || value === "host") return value ?? "none";
  const name = "sandbox.network";
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidOptionError(name, `${name} must be "none", "host" or { allow: [...] }, got ${describe(value)}`);
  }
  const raw = value as Record<string, unknown>;
  const extra = Object.keys(raw).find((key) => key !== "allow");
  if (extra !== undefined)
    throw new InvalidOptionError(`${name}.${extra}`, `Unknown ${name} option ${describe(extra)}; known: allow`);
  if (!Array.isArray(raw.allow)) {
    throw new InvalidOptionError(
      `${name}.allow`,
      `${name}.allow must be an array of host names, got ${describe(raw.allow)}`,
    );
  }
  return { allow: raw.allow.map((item, index) => allowedName(`${name}.allow[${index}]`, item)) };
}

/** "example.com" or "example.com:443" or "[::1]:8080"; no scheme, path or wildcard. */
function allowedName(name: string, value: unknown): AllowedName {
  if (typeof value !== "string") throw new InvalidOptionError(name, `${name} must be a string, got ${describe(value)}`);
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(value);
  const port = match?.[2] === undefined ? undefined : Number(match[2]);
  if (match === null || (port !== undefined && (port < 1 || port > 65535))) {
    throw new InvalidOptionError(
      name,
      `${name} must be a host name or host:port such as "registry.npmjs.org" or "localhost:8080", got ${describe(value)}`,
    );
  }
  return { host: match[1]!.toLowerCase(), port };
}

/**
 * Absolute, real paths. A writable path must exist (there is nothing to bind
 * otherwise); a denied path that does not exist is skipped: there is nothing
 * to read, and covering it would need a mount point bwrap cannot create on a
 * read-only root.
 */
export function resolveSandbox(options: SandboxOptions, cwd: string): ResolvedSandbox {
  const home = homedir();
  const base = absolute(expandHome(cwd, home), process.cwd());
  const writable = options.writable.map((path, index) => {
    const full = absolute(expandHome(path, home), base);
    if (!existsSync(full)) {
      throw new InvalidOptionError(
        `sandbox.writable[${index}]`,
        `sandbox.writable[${index}] ${describe(path)} does not exist (resolved to ${full}); create it first`,
      );
    }
    return realpathSync(full);
  });
  const denyRead: ResolvedSandbox["denyRead"] = [];
  for (const path of options.denyRead) {
    const full = absolute(expandHome(path, home), base);
    if (!existsSync(full)) continue;
    // The mount covers the real path, so every spelling of it (a symlink, /proc/self/root/…) is covered too.
    const real = realpathSync(full);
    denyRead.push({ path: real, directory: statSync(real).isDirectory() });
  }
  return { writable: [...new Set(writable)], denyRead, network: options.network };
}

function expandHome(path: string, home: string): string {
  if (path === "~") return home;
  if (path.startsWith("~/")) return `${home}${path.slice(1)}`;
  return path;
}

function absolute(path: string, base: string): string {
  return isAbsolute(path) ? resolve(path) : resolve(base, path);
}
