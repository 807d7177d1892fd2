/**
 * A Shellwright file entry as envd's EntryInfo: permission bits only in
 * `mode` (Go's FileMode.Perm), `permissions` as Go prints a FileMode
 * (`-rw-r--r--`, `drwxr-xr-x`, `Lrwxrwxrwx`), and a symlink's target made
 * absolute against the link's directory, as envd reports it. The gateway's
 * token is masked in the name, path and target: a command of the sandbox
 * chooses them, as it chooses its output.
 */

import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { posix } from "node:path";
import type { FileEntry } from "../../../sdk/file-entries.js";
import type { TokenMask } from "../../token-mask.js";
import { EntryInfoSchema, FileType, type EntryInfo } from "../gen/filesystem/filesystem_pb.js";

const TYPES: Record<FileEntry["type"], FileType> = {
  file: FileType.FILE,
  dir: FileType.DIRECTORY,
  symlink: FileType.SYMLINK,
  other: FileType.UNSPECIFIED,
};

const LETTERS: Record<FileEntry["type"], string> = { file: "-", dir: "d", symlink: "L", other: "?" };

export function permissionString(type: FileEntry["type"], mode: number): string {
  let text = LETTERS[type];
  for (let shift = 6; shift >= 0; shift -= 3) {
    const bits = (mode >> shift) & 7;
    text += `${bits & 4 ? "r" : "-"}${bits & 2 ? "w" : "-"}${bits & 1 ? "x" : "-"}`;
  }
  return text;
}

export function entryInfo(entry: FileEntry, mask: TokenMask | undefined): EntryInfo {
  const mode = entry.mode & 0o777;
  const text = (value: string): string => (mask === undefined ? value : mask.mask(value));
  return create(EntryInfoSchema, {
    name: text(entry.name),
    type: TYPES[entry.type],
    path: text(entry.path),
    size: BigInt(entry.size),
    mode,
    permissions: permissionString(entry.type, mode),
    owner: entry.owner,
    group: entry.group,
    modifiedTime: timestampFromMs(entry.modifiedAt.getTime()),
    ...(entry.symlinkTarget === undefined
      ? {}
      : { symlinkTarget: text(posix.resolve(posix.dirname(entry.path), entry.symlinkTarget)) }),
  });
}

/** Paths in the order a directory walk meets them (a directory, then what is in it), as envd lists them. */
export function walkOrder(a: FileEntry, b: FileEntry): number {
  const left = a.path.split("/");
  const right = b.path.split("/");
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    if (left[i] !== right[i]) return left[i]! < right[i]! ? -1 : 1;
  }
  return left.length - right.length;
}
