/**
 * The write path shared by write_file and patch: a probe that resolves the
 * path on the backend (for the guard and for writing through symlinks) and
 * reads the existing file, then an atomic write (temp file in the same
 * directory, mode kept, rename) whose result is verified by hash on the
 * backend. Content always travels on stdin.
 */

import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import type { Environment } from "../../core/environment.js";
import {
  BackendIoError,
  parseFramed,
  quotePath,
  RESOLVE_PATH,
  runOnBackend,
  shellQuote,
} from "../shared/backend-io.js";
import { writeDenied, type WriteGuardOptions } from "./path-guard.js";
import { baseNameOf, directoryOf, enterVerifiedDirectory } from "./verified-directory.js";
import { takeWriteLock } from "./write-lock.js";

export const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

export interface WriteProbe {
  /** Absolute and symlink-free, on the backend. */
  resolved: string;
  kind: "file" | "new" | "dir" | "special";
  /** Octal permission bits of the existing file. */
  mode?: string;
  /** The existing file: its first 64 KiB, or all of it when asked. */
  existing: Buffer;
  parentExists: boolean;
  /** Set when the guard refuses the path. */
  denied?: string;
}

const SAMPLE_BYTES = 65536;
const GZIP_ABOVE = 32768;

export async function probeForWrite(
  session: Environment,
  path: string,
  options: {
    guard: WriteGuardOptions;
    readAll: boolean;
    /** Without readAll, how much of an existing file to bring back (the style sample). @default 65536 */
    sampleBytes?: number;
    signal?: AbortSignal | undefined;
  },
): Promise<WriteProbe> {
  const root = options.guard.safeRoot;
  const producer = [
    `__sw_p=${quotePath(path)}${root === undefined ? "" : `; __sw_root=${quotePath(root)}`}`,
    // One realpath for all paths (GNU); one by one through the portable fallback otherwise.
    `if __sw_all=$(realpath -m -- "$HOME" "$__sw_p"${root === undefined ? "" : ` "$__sw_root"`} 2>/dev/null); then`,
    `  { IFS= read -r __sw_h; IFS= read -r __sw_r; IFS= read -r __sw_rr; } <<< "$__sw_all"`,
    `else`,
    `  ${RESOLVE_PATH.replace(/\n/g, "\n  ")}; __sw_keep=$__sw_r`,
    `  __sw_p=$HOME; ${RESOLVE_PATH.replace(/\n/g, "; ")}; __sw_h=$__sw_r`,
    root === undefined ? "" : `  __sw_p=$__sw_root; ${RESOLVE_PATH.replace(/\n/g, "; ")}; __sw_rr=$__sw_r`,
    `  __sw_r=$__sw_keep`,
    `fi`,
    `printf 'home %s\\nresolved %s\\n' "$__sw_h" "$__sw_r"`,
    root === undefined ? "" : `printf 'root %s\\n' "$__sw_rr"`,
    `if [ -d "$__sw_r" ]; then echo 'kind dir'`,
    `elif [ -f "$__sw_r" ]; then`,
    `  printf 'kind file\\nmode %s\\n' "$(stat -c %a -- "$__sw_r" 2>/dev/null || stat -f %Lp -- "$__sw_r" 2>/dev/null)"`,
    // A big file travels gzipped (source text shrinks 4-10x): fewer and smaller replies.
    options.readAll
      ? `  if [ -s "$__sw_r" ] && [ $(wc -c < "$__sw_r") -gt ${GZIP_ABOVE} ] && command -v gzip >/dev/null 2>&1; then printf 'encoding gzip\\n--\\n'; gzip -1 -c -- "$__sw_r" || exit 1; else printf -- '--\\n'; cat -- "$__sw_r" || exit 1; fi`
      : `  printf -- '--\\n'; head -c ${options.sampleBytes ?? SAMPLE_BYTES} -- "$__sw_r" || exit 1`,
    `elif [ -e "$__sw_r" ]; then echo 'kind special'`,
    `else echo 'kind new'; if [ -d "\${__sw_r%/*}/" ]; then echo 'parent yes'; fi; fi`,
  ]
    .filter(Boolean)
    .join("\n");
  const result = await runOnBackend(session, producer, { signal: options.signal });
  const { fields, body } = parseFramed(result.stdout);
  if (result.exitCode !== 0 || !fields.has("resolved") || !fields.has("kind")) {
    throw new BackendIoError(
      `could not inspect '${path}' on the backend: ${result.stderr.trim() || `exit code ${result.exitCode}`}`,
    );
  }
  const resolved = fields.get("resolved")!;
  const kind = fields.get("kind") as WriteProbe["kind"];
  const existing = fields.get("encoding") === "gzip" ? gunzipSync(body) : body;
  const probe: WriteProbe = {
    resolved,
    kind,
    existing,
    parentExists: kind === "file" || fields.get("parent") === "yes",
  };
  const mode = fields.get("mode");
  if (mode && /^[0-7]{3,4}$/.test(mode)) probe.mode = mode;
  const denied = writeDenied(resolved, fields.get("home") ?? "", options.guard, fields.get("root"));
  if (denied !== undefined) probe.denied = denied;
  return probe;
}

export interface AtomicWriteResult {
  bytesWritten: number;
  /** "hash" when the backend's sha256 of the new file matched, "reread" when compared byte by byte. */
  verifiedBy: "hash" | "reread";
}

/** A write that found the file changed since it was read (patch refuses rather than lose that change). */
export class ConcurrentChangeError extends Error {
  override name = "ConcurrentChangeError";
}

/**
 * Writes `bytes` to `resolved` atomically and verifies what landed on disk.
 * `expectedSha256`: refuse when the file's current content has another hash
 * (or the file is gone).
 *
 * One bash does it all, so nothing can slip between the steps: it enters the
 * file's directory and proves it is still the one the guard approved (see
 * verified-directory.ts), writes a temp file there, then under the file's
 * write lock (write-lock.ts) compares the hash, renames and hashes the result.
 */
export async function writeAtomic(
  session: Environment,
  resolved: string,
  bytes: Uint8Array,
  options: { mode?: string | undefined; expectedSha256?: string | undefined; signal?: AbortSignal | undefined },
): Promise<AtomicWriteResult> {
  const name = shellQuote(`./${baseNameOf(resolved)}`);
  const hashOf = (file: string, into: string): string =>
    `${into}=$(sha256sum < ${file} 2>/dev/null); ${into}=\${${into}%% *}`;
  const producer = [
    enterVerifiedDirectory(directoryOf(resolved), { create: true }),
    // The temp file is filled before the lock is taken: the lock is held only for the check, the rename and the hash.
    `__sw_tmp=$(mktemp ./.shellwright-tmp.XXXXXX) || exit 1`,
    `if ! cat > "$__sw_tmp"; then rm -f -- "$__sw_tmp"; exit 1; fi`,
    options.mode === undefined
      ? `chmod "$(printf '%o' $(( 0666 & ~$(umask) )))" "$__sw_tmp"`
      : `chmod ${options.mode} "$__sw_tmp"`,
    takeWriteLock(resolved).replace(/exit 1/g, 'rm -f -- "$__sw_tmp"; exit 1'),
    options.expectedSha256 === undefined
      ? ""
      : [
          `if [ ! -f ${name} ]; then rm -f -- "$__sw_tmp"; echo 'conflict gone'; exit 0; fi`,
          `${hashOf(name, "__sw_h")}; if [ -n "$__sw_h" ] && [ "$__sw_h" != ${options.expectedSha256} ]; then rm -f -- "$__sw_tmp"; echo 'conflict changed'; exit 0; fi`,
        ].join("\n"),
    // -T: if the name became a directory (or a symlink to one), fail instead of moving the file into it.
    `if ! mv -fT -- "$__sw_tmp" ${name}; then rm -f -- "$__sw_tmp"; exit 1; fi`,
    // The hash proves the content; when sha256sum is missing, the size goes back and the caller re-reads.
    `${hashOf(name, "__sw_h")}`,
    `if [ -n "$__sw_h" ]; then printf 'bytes %s\\nsha256 %s\\n' ${bytes.length} "$__sw_h"; else printf 'bytes %s\\n' "$(wc -c < ${name})"; fi`,
  ]
    .filter(Boolean)
    .join("\n");
  const result = await runOnBackend(session, producer, { stdin: bytes, signal: options.signal });
  const { fields } = parseFramed(result.stdout);
  const moved = fields.get("moved");
  if (moved !== undefined) {
    throw new ConcurrentChangeError(
      `the directory of '${resolved}' was replaced while writing (it now leads to '${moved}'); nothing was written. Check the path and retry`,
    );
  }
  const conflict = fields.get("conflict");
  if (conflict !== undefined) {
    throw new ConcurrentChangeError(
      `'${resolved}' ${conflict === "gone" ? "was deleted" : "changed on disk"} since it was read; nothing was written. Read it again and retry`,
    );
  }
  if (result.exitCode !== 0 || !fields.has("bytes")) {
    throw new BackendIoError(
      `could not write '${resolved}': ${result.stderr.trim() || `exit code ${result.exitCode}`}`,
    );
  }
  const written = Number(fields.get("bytes"));
  const hash = fields.get("sha256") ?? "";
  if (hash !== "") {
    if (hash !== sha256(bytes)) {
      throw new BackendIoError(
        `Post-write verification failed for '${resolved}': on-disk content differs from the intended write (${written} bytes on disk, ${bytes.length} intended).`,
      );
    }
    return { bytesWritten: written, verifiedBy: "hash" };
  }
  // No sha256sum on this backend: read the file back and compare.
  const reread = await runOnBackend(session, `cat -- ${shellQuote(resolved)}`, { signal: options.signal });
  if (reread.exitCode !== 0 || !reread.stdout.equals(Buffer.from(bytes))) {
    throw new BackendIoError(
      `Post-write verification failed for '${resolved}': on-disk content differs from the intended write.`,
    );
  }
  return { bytesWritten: written, verifiedBy: "reread" };
}

/** Content written over an existing file keeps that file's line endings and byte-order mark. */
export function matchFileStyle(content: string, existing: Uint8Array): { text: string; crlf: boolean; bom: boolean } {
  const sample = Buffer.from(existing).toString("utf8");
  const bom = sample.startsWith("\uFEFF") && !content.startsWith("\uFEFF");
  const crlf = sample.includes("\r\n") && content.includes("\n") && !content.includes("\r\n");
  let text = crlf ? content.replace(/\n/g, "\r\n") : content;
  if (bom) text = `\uFEFF${text}`;
  return { text, crlf, bom };
}
