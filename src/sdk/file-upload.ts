/**
 * A write too large for one round trip, or whose bytes arrive as a stream:
 * the bytes go, piece by piece on stdin, into a temp file in the target's own
 * directory, which is then renamed over the target under its write lock and
 * verified by hash, as write_file's atomic write does (tools/files/atomic-write.ts).
 * Every step enters the directory and proves it is still the one the guard
 * approved (verified-directory.ts), so a swapped symlink between two pieces
 * cannot send a piece elsewhere. Until the rename, the target is untouched;
 * a failure or an abort removes the temp file.
 */

import { createHash } from "node:crypto";
import type { Environment } from "../core/environment.js";
import { FileError } from "../core/errors.js";
import { parseFramed, runOnBackend, shellQuote } from "../tools/shared/backend-io.js";
import { baseNameOf, directoryOf, enterVerifiedDirectory } from "../tools/files/verified-directory.js";
import { takeWriteLock } from "../tools/files/write-lock.js";

/** Pieces of `size` bytes (the last one shorter), whatever sizes the source yields. */
export async function* pieces(
  source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  size: number,
): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  for await (const chunk of source) {
    let bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk);
    while (heldBytes + bytes.length >= size) {
      const take = size - heldBytes;
      yield Buffer.concat([...held, bytes.subarray(0, take)]);
      held = [];
      heldBytes = 0;
      bytes = bytes.subarray(take);
    }
    if (bytes.length > 0) {
      held.push(bytes);
      heldBytes += bytes.length;
    }
  }
  if (heldBytes > 0) yield Buffer.concat(held);
}

export interface UploadTarget {
  /** Absolute and symlink-free, approved by the guard. */
  resolved: string;
  /** Octal permission bits for the result (the existing file's, or the caller's). */
  mode: string | undefined;
  /** The path as the caller gave it, for errors. */
  path: string;
}

/** Streams `source` into `target` atomically; returns the bytes written. */
export async function uploadAtomic(
  env: Environment,
  target: UploadTarget,
  source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  pieceBytes: number,
  signal: AbortSignal | undefined,
): Promise<number> {
  const dir = directoryOf(target.resolved);
  const hash = createHash("sha256");
  let temp: string | undefined;
  let total = 0;
  const run = async (producer: string, stdin?: Uint8Array): Promise<Map<string, string>> => {
    const result = await runOnBackend(env, producer, { ...(stdin === undefined ? {} : { stdin }), signal });
    const { fields } = parseFramed(result.stdout);
    const moved = fields.get("moved");
    if (moved !== undefined)
      throw new FileError(
        "changed",
        target.path,
        `the directory of '${target.resolved}' was replaced while writing (it now leads to '${moved}'); nothing was written`,
        { backend: env.backend },
      );
    if (result.exitCode !== 0)
      throw new FileError(
        "failed",
        target.path,
        `could not write '${target.resolved}': ${result.stderr.trim() || `exit code ${result.exitCode}`}`,
        { backend: env.backend },
      );
    return fields;
  };
  try {
    for await (const piece of pieces(source, pieceBytes)) {
      hash.update(piece);
      total += piece.length;
      if (temp === undefined) {
        const fields = await run(
          [
            enterVerifiedDirectory(dir, { create: true }),
            `__sw_tmp=$(mktemp ./.shellwright-tmp.XXXXXX) || exit 1`,
            `if ! cat > "$__sw_tmp"; then rm -f -- "$__sw_tmp"; exit 1; fi`,
            `printf 'temp %s\\n' "\${__sw_tmp#./}"`,
          ].join("\n"),
          piece,
        );
        temp = fields.get("temp");
        if (temp === undefined || !/^\.shellwright-tmp\.[A-Za-z0-9]+$/.test(temp))
          throw new FileError("failed", target.path, `could not start writing '${target.resolved}'`, {
            backend: env.backend,
          });
      } else {
        await run([enterVerifiedDirectory(dir, { create: false }), appendTo(temp)].join("\n"), piece);
      }
    }
    if (temp === undefined) {
      // An empty source: one empty piece makes the temp file.
      return await uploadAtomic(env, target, [Buffer.alloc(0)], pieceBytes, signal);
    }
    const fields = await run(commitScript(dir, temp, baseNameOf(target.resolved), target));
    const written = Number(fields.get("bytes"));
    const landed = fields.get("sha256") ?? "";
    if (written !== total || (landed !== "" && landed !== hash.digest("hex")))
      throw new FileError(
        "failed",
        target.path,
        `Post-write verification failed for '${target.resolved}': ${written} bytes on disk, ${total} sent`,
        { backend: env.backend },
      );
    temp = undefined;
    return total;
  } finally {
    if (temp !== undefined) {
      // Best effort, and not under the caller's signal: an abort must not leave the temp file.
      await runOnBackend(
        env,
        `${enterVerifiedDirectory(dir, { create: false })}\nrm -f -- ${shellQuote(`./${temp}`)}`,
      ).catch(() => undefined);
    }
  }
}

/** Appends stdin to the temp file, which must still be a regular file of ours (not a symlink put in its place). */
function appendTo(temp: string): string {
  const file = shellQuote(`./${temp}`);
  return `if [ ! -f ${file} ] || [ -L ${file} ]; then echo 'the temp file is gone' >&2; exit 1; fi\ncat >> ${file} || exit 1`;
}

/** Moves the temp file over the target under its write lock and reports its size and hash. */
function commitScript(dir: string, temp: string, name: string, target: UploadTarget): string {
  const file = shellQuote(`./${temp}`);
  const dest = shellQuote(`./${name}`);
  return [
    enterVerifiedDirectory(dir, { create: false }),
    `if [ ! -f ${file} ] || [ -L ${file} ]; then echo 'the temp file is gone' >&2; exit 1; fi`,
    target.mode === undefined
      ? `chmod "$(printf '%o' $(( 0666 & ~$(umask) )))" ${file}`
      : `chmod ${target.mode} ${file}`,
    takeWriteLock(target.resolved),
    // -T: if the name became a directory (or a symlink to one), fail instead of moving the file into it.
    `mv -fT -- ${file} ${dest} || exit 1`,
    `__sw_h=$(sha256sum < ${dest} 2>/dev/null); __sw_h=\${__sw_h%% *}`,
    `printf 'bytes %s\\nsha256 %s\\n' "$(wc -c < ${dest})" "$__sw_h"`,
  ].join("\n");
}
