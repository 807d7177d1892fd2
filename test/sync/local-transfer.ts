/**
 * A SyncTransfer that really copies, into a directory on this machine that
 * plays the remote home, and records every call. It sits at our own seam (the
 * SyncTransfer interface), so FileSync is tested on real files; the SSH
 * transfer is tested against a real sshd in test/backends/ssh/sync.test.ts.
 */

import { chmod, copyFile, mkdir, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { DirectoryMirror, FileUpload, SyncTransfer } from "../../src/sync/index.js";

export type Call =
  | { op: "makeDirectories"; paths: string[] }
  | { op: "uploadFiles"; remotes: string[] }
  | { op: "removeFiles"; paths: string[] }
  | { op: "mirrorDirectory"; remote: string; changed: string[]; removed: string[]; full: boolean };

export class LocalDirectoryTransfer implements SyncTransfer {
  readonly calls: Call[] = [];
  /** The next call of this operation throws. */
  failNext: Call["op"] | undefined;

  constructor(readonly home: string) {}

  #resolve(path: string): string {
    return path.startsWith("/") ? join(this.home, "root", path) : join(this.home, path);
  }

  #maybeFail(op: Call["op"]): void {
    if (this.failNext === op) {
      this.failNext = undefined;
      throw new Error(`${op} failed on purpose`);
    }
  }

  async makeDirectories(paths: readonly string[]): Promise<void> {
    this.calls.push({ op: "makeDirectories", paths: [...paths] });
    this.#maybeFail("makeDirectories");
    for (const path of paths) await mkdir(this.#resolve(path), { recursive: true });
  }

  async uploadFiles(files: readonly FileUpload[]): Promise<void> {
    this.calls.push({ op: "uploadFiles", remotes: files.map((file) => file.remote) });
    this.#maybeFail("uploadFiles");
    for (const file of files) {
      // Parents must exist already: FileSync promises that.
      await copyFile(file.local, this.#resolve(file.remote));
      await chmod(this.#resolve(file.remote), file.mode);
    }
  }

  async removeFiles(paths: readonly string[]): Promise<void> {
    this.calls.push({ op: "removeFiles", paths: [...paths] });
    this.#maybeFail("removeFiles");
    for (const path of paths) await rm(this.#resolve(path), { force: true });
  }

  async mirrorDirectory(mirror: DirectoryMirror): Promise<void> {
    this.calls.push({
      op: "mirrorDirectory",
      remote: mirror.remote,
      changed: mirror.changed.map((e) => e.path),
      removed: [...mirror.removed],
      full: mirror.full,
    });
    this.#maybeFail("mirrorDirectory");
    const root = this.#resolve(mirror.remote);
    // Parents of changed files were created by makeDirectories.
    for (const entry of mirror.changed) {
      await copyFile(join(mirror.local, entry.path), join(root, entry.path));
      await chmod(join(root, entry.path), entry.mode);
    }
    for (const path of mirror.removed) await rm(join(root, path), { force: true });
    if (mirror.full) {
      const keep = new Set(mirror.entries.map((entry) => entry.path));
      for (const path of await listFiles(root)) if (!keep.has(path)) await rm(join(root, path), { force: true });
    }
  }
}

export async function listFiles(root: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  let names;
  try {
    names = await readdir(join(root, prefix), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const dirent of names) {
    const path = prefix === "" ? dirent.name : `${prefix}/${dirent.name}`;
    if (dirent.isDirectory()) out.push(...(await listFiles(root, path)));
    else out.push(path);
  }
  return out.sort();
}

export async function modeOf(path: string): Promise<number> {
  return (await stat(path)).mode & 0o7777;
}
