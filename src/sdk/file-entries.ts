/**
 * What the files API says about an entry (src/sdk/files.ts), and how it
 * reads the records the listing scripts print (file-scripts.ts).
 */

import { posix } from "node:path";

export type FileType = "file" | "dir" | "symlink" | "other";

export interface FileEntry {
  /** The last component of the path. */
  name: string;
  /** Absolute on the backend (not resolved: a symlinked directory keeps its name). */
  path: string;
  type: FileType;
  /** In bytes (a symlink: the length of its target's name). */
  size: number;
  /** Permission bits, e.g. 0o644. */
  mode: number;
  modifiedAt: Date;
  /** The owning user and group, by name (a number when the backend has no name for it). */
  owner: string;
  group: string;
  /** What a symlink points to. */
  symlinkTarget?: string;
}

const TYPES: Record<string, FileType> = { f: "file", d: "dir", l: "symlink" };

/** Fields per entry in a listing: type, size, mode, mtime, relative path, link target, owner, group. */
export const ENTRY_FIELDS = 8;

/** The NUL-terminated records of a listing, paths made absolute against `base` (`self`: the record is `base` itself). */
export function parseEntries(body: Buffer, base: string, self = false): FileEntry[] {
  const fields = body.toString("utf8").split("\0");
  const entries: FileEntry[] = [];
  for (let i = 0; i + ENTRY_FIELDS <= fields.length; i += ENTRY_FIELDS) {
    const [type, size, mode, mtime, relative, target, owner, group] = fields.slice(i, i + ENTRY_FIELDS) as string[];
    const path = posix.normalize(self ? base : posix.join(base, relative!));
    entries.push({
      name: posix.basename(path),
      path,
      type: TYPES[type!] ?? "other",
      size: Number(size),
      mode: Number.parseInt(mode!, 8),
      modifiedAt: new Date(Math.round(Number(mtime) * 1000)),
      owner: owner!,
      group: group!,
      ...(type === "l" ? { symlinkTarget: target! } : {}),
    });
  }
  return entries;
}
