/**
 * The `sync` option of a remote backend's config, validated once at the entry
 * point. Every error names the option and the value.
 */

import { resolve } from "node:path";
import { InvalidOptionError } from "../core/errors.js";
import { describe, plainObject, rejectUnknown, shellString } from "../core/options.js";
import { DEFAULT_SYNC_INTERVAL_MS } from "./file-sync.js";
import type { SyncDirectorySpec, SyncFileSpec } from "./types.js";

/** What a user writes in a backend config. */
export interface SyncConfig {
  /** Single files, such as credentials; each lands with `mode` (default 0600). */
  files?: SyncFileSpec[];
  /** Directories mirrored whole; remote files that are not in the local tree are deleted. */
  directories?: SyncDirectorySpec[];
  /** Inside this many milliseconds after a sync, commands do not even look at the files. @default 5000 */
  intervalMs?: number;
  /** Transfer everything before every command (debugging). @default false */
  force?: boolean;
}

export interface NormalizedSyncConfig {
  files: SyncFileSpec[];
  directories: SyncDirectorySpec[];
  intervalMs: number;
  force: boolean;
}

/** Validates `sync`; relative local paths are resolved against `baseDir`. Returns undefined when nothing is to be synced. */
export function normalizeSyncConfig(
  name: string,
  value: unknown,
  baseDir = process.cwd(),
): NormalizedSyncConfig | undefined {
  if (value === undefined) return undefined;
  const raw = plainObject(name, value);
  rejectUnknown(name, raw, ["files", "directories", "intervalMs", "force"]);
  const files = list(`${name}.files`, raw.files).map((item, index) => {
    const where = `${name}.files[${index}]`;
    const spec = plainObject(where, item);
    rejectUnknown(where, spec, ["local", "remote", "mode"]);
    const file: SyncFileSpec = {
      local: localPath(`${where}.local`, spec.local, baseDir),
      remote: remotePath(`${where}.remote`, spec.remote),
    };
    if (spec.mode !== undefined) {
      if (typeof spec.mode !== "number" || !Number.isInteger(spec.mode) || spec.mode < 0 || spec.mode > 0o7777) {
        throw new InvalidOptionError(
          `${where}.mode`,
          `${where}.mode must be a file mode from 0 to 0o7777 (for example 0o600), got ${describe(spec.mode)}`,
        );
      }
      file.mode = spec.mode;
    }
    return file;
  });
  const directories = list(`${name}.directories`, raw.directories).map((item, index) => {
    const where = `${name}.directories[${index}]`;
    const spec = plainObject(where, item);
    rejectUnknown(where, spec, ["local", "remote"]);
    const remote = remotePath(`${where}.remote`, spec.remote);
    if (remote === "." || remote === "/") {
      throw new InvalidOptionError(
        `${where}.remote`,
        `${where}.remote must name a directory below the remote home or root (a mirror deletes what is not in the local tree), got ${describe(spec.remote)}`,
      );
    }
    return { local: localPath(`${where}.local`, spec.local, baseDir), remote };
  });
  let intervalMs = DEFAULT_SYNC_INTERVAL_MS;
  if (raw.intervalMs !== undefined) {
    if (typeof raw.intervalMs !== "number" || !Number.isFinite(raw.intervalMs) || raw.intervalMs < 0) {
      throw new InvalidOptionError(
        `${name}.intervalMs`,
        `${name}.intervalMs must be a number of milliseconds, 0 or more, got ${describe(raw.intervalMs)}`,
      );
    }
    intervalMs = raw.intervalMs;
  }
  if (raw.force !== undefined && typeof raw.force !== "boolean") {
    throw new InvalidOptionError(`${name}.force`, `${name}.force must be a boolean, got ${describe(raw.force)}`);
  }
  const remotes = new Set<string>();
  for (const [index, target] of [...files.map((f) => f.remote), ...directories.map((d) => d.remote)].entries()) {
    if (remotes.has(target))
      throw new InvalidOptionError(name, `${name} names the remote path ${describe(target)} twice (entry ${index})`);
    remotes.add(target);
  }
  if (files.length === 0 && directories.length === 0) return undefined;
  return { files, directories, intervalMs, force: raw.force === true };
}

function list(name: string, value: unknown): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidOptionError(name, `${name} must be an array, got ${describe(value)}`);
  return value;
}

function localPath(name: string, value: unknown, baseDir: string): string {
  return resolve(baseDir, shellString(name, value));
}

/**
 * A remote path: absolute, or relative to the remote home. `~/x` means `x`;
 * `~user` is refused (it would be expanded differently by each transfer).
 */
function remotePath(name: string, value: unknown): string {
  let path = shellString(name, value);
  if (/[\n\r]/.test(path))
    throw new InvalidOptionError(name, `${name} must not contain a line break, got ${describe(value)}`);
  if (path === "~") path = ".";
  else if (path.startsWith("~/")) path = path.slice(2);
  else if (path.startsWith("~"))
    throw new InvalidOptionError(
      name,
      `${name} must be absolute or relative to the remote home (\`~user\` is not supported), got ${describe(value)}`,
    );
  const segments = path.split("/");
  if (segments.includes(".."))
    throw new InvalidOptionError(name, `${name} must not contain "..", got ${describe(value)}`);
  const absolute = path.startsWith("/");
  const normalized = segments.filter((segment) => segment !== "" && segment !== ".").join("/");
  if (absolute) return `/${normalized}`;
  return normalized === "" ? "." : normalized;
}
