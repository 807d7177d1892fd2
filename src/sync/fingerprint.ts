/**
 * What a local file or tree looks like now, cheaply: one lstat per entry and
 * no process. Two equal fingerprints mean nothing needs to move.
 */

import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { TreeEntry } from "./types.js";

export interface FileStamp {
  size: number;
  mtimeMs: number;
  mode: number;
}

/** A file's (mtime, size, mode), or undefined when it is not a regular file (or is missing). */
export async function stampFile(path: string): Promise<FileStamp | undefined> {
  try {
    const stats = await lstat(path, { bigint: true });
    if (!stats.isFile()) return undefined;
    return { size: Number(stats.size), mtimeMs: Number(stats.mtimeNs) / 1e6, mode: Number(stats.mode) & 0o7777 };
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

export const sameStamp = (a: FileStamp | undefined, b: FileStamp | undefined): boolean =>
  a !== undefined && b !== undefined && a.size === b.size && a.mtimeMs === b.mtimeMs && a.mode === b.mode;

/**
 * Every regular file under `root`, sorted by path; undefined when `root` is
 * not a directory. Symbolic links are skipped, never followed: a link to a
 * host path means nothing on the remote side, and following one could ship
 * files from outside the tree.
 */
export async function walkTree(root: string): Promise<TreeEntry[] | undefined> {
  try {
    const stats = await lstat(root);
    if (!stats.isDirectory()) return undefined;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  const entries: TreeEntry[] = [];
  await walkInto(root, "", entries);
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return entries;
}

async function walkInto(root: string, prefix: string, into: TreeEntry[]): Promise<void> {
  let names;
  try {
    names = await readdir(join(root, prefix), { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return; // removed while we walked: the next sync sees it
    throw error;
  }
  await Promise.all(
    names.map(async (dirent) => {
      const path = prefix === "" ? dirent.name : `${prefix}/${dirent.name}`;
      if (dirent.isDirectory()) return walkInto(root, path, into);
      if (!dirent.isFile()) return;
      const stamp = await stampFile(join(root, path));
      if (stamp) into.push({ path, ...stamp });
    }),
  );
}

/** One string per tree: equal strings, equal trees (paths, sizes, mtimes, modes). */
export function treeFingerprint(entries: readonly TreeEntry[]): Map<string, string> {
  return new Map(entries.map((entry) => [entry.path, `${entry.mtimeMs}:${entry.size}:${entry.mode}`]));
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}
