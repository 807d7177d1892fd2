/**
 * Files of a session's state dir read and written by this process, which
 * runs outside the sandbox, while the session's commands can write that dir
 * (a sandbox binds it). A command may have swapped any name in it for a
 * symlink to a file it must not see (another session's snapshot), so no
 * name below the state dir is ever followed: each component is opened
 * O_NOFOLLOW through the fd of the one above (`/proc/self/fd/N/name`, the
 * openat Node lacks), and what is read must be a regular file owned by us.
 */

import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { CheckpointError } from "../../core/errors.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;

/** Runs `use` with the fd of `base/...names`, a directory reached without following a symlink below `base`. */
export function withDir<T>(base: string, names: string[], what: string, use: (dir: string) => T): T {
  let fd = openSync(base, O_RDONLY | O_DIRECTORY);
  try {
    for (const name of names) {
      const next = openOrRefuse(`${at(fd)}/${name}`, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, what, name);
      closeSync(fd);
      fd = next;
    }
    return use(at(fd));
  } finally {
    closeSync(fd);
  }
}

/** Makes `dir/name` a private directory; one there already must be a real directory of ours. */
export function makePrivateDir(dir: string, name: string, what: string, fresh: boolean): void {
  try {
    mkdirSync(`${dir}/${name}`, { mode: 0o700 });
  } catch (error) {
    if (fresh || (error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  // Checked by opening it as the caller will: a planted symlink fails here.
  const fd = openOrRefuse(`${dir}/${name}`, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, what, name);
  try {
    const st = fstatSync(fd);
    if (st.uid !== process.getuid!() || (st.mode & 0o077) !== 0)
      throw refuse(what, name, "is not a private directory of this user");
  } finally {
    closeSync(fd);
  }
}

/** Copies the regular file `from` to the new file `to` (0600), following no symlink at either end. */
export function copyStateFile(
  from: string,
  to: string,
  what: string,
  edit: (content: Buffer) => Buffer = (content) => content,
): void {
  const source = openOrRefuse(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, what, from);
  let content: Buffer;
  try {
    const st = fstatSync(source);
    if (!st.isFile() || st.uid !== process.getuid!()) throw refuse(what, from, "is not a regular file of this user");
    content = readFileSync(source);
  } finally {
    closeSync(source);
  }
  const target = openOrRefuse(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, what, to, 0o600);
  try {
    writeFileSync(target, edit(content));
  } finally {
    closeSync(target);
  }
}

const at = (fd: number) => `/proc/self/fd/${fd}`;

function openOrRefuse(path: string, flags: number, what: string, name: string, mode?: number): number {
  try {
    return openSync(path, flags, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR" || code === "EEXIST")
      throw refuse(
        what,
        name,
        `is not what the session left there (${code}): a symlink or other file was put in its place`,
      );
    throw error;
  }
}

function refuse(what: string, name: string, why: string): CheckpointError {
  const base = name.slice(name.lastIndexOf("/") + 1);
  return new CheckpointError("failed", `Cannot ${what}: ${base} in the session's state dir ${why}`, {
    backend: "local",
  });
}
