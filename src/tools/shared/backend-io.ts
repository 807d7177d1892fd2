/**
 * Byte-exact I/O with the backend, through the session only.
 *
 * A tool runs a small bash "producer" on the backend and gets its stdout back
 * as exact bytes, whatever its size: the session's output is text (invalid
 * UTF-8 becomes a notice) and is cut to a head and a tail beyond its limit, so
 * the producer's stdout goes to a temp file inside the backend and comes back
 * base64-encoded, in chunks that fit the session's output limit. Small results
 * (the common case) cost one round trip. Data for the backend travels on stdin,
 * which the session delivers exactly on every backend; it never appears on a
 * command line.
 */

import { randomBytes } from "node:crypto";
import { gunzipSync } from "node:zlib";
import type { Environment } from "../../core/environment.js";
import { shellQuote } from "../../core/script.js";

export { shellQuote };

export interface BackendRunOptions {
  stdin?: Uint8Array | string;
  /** Where the producer runs; default the session's cwd (which does not move). */
  cwd?: string;
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
  /** Gzip results that need more than one round trip, when the backend has gzip. @default true */
  compress?: boolean;
}

export interface BackendRunResult {
  /** The producer's exit code. */
  exitCode: number;
  /** Its stdout, exactly. */
  stdout: Buffer;
  /** The start of its stderr (up to 4 000 characters). */
  stderr: string;
}

/** A failure of the tool machinery itself (not of the file operation); runTool turns it into `{error}`. */
export class BackendIoError extends Error {
  override name = "BackendIoError";
}

/** What the one-time calibration prints to learn the session's output limit. */
const CALIBRATION_BYTES = 512 * 1024;
/** Never ask for more than this per round trip, so memory stays modest. */
const MAX_CHUNK = 384 * 1024;

const chunkSizes = new WeakMap<Environment, number>();

/** Raw bytes that base64-encode (76-column lines) into at most `textBytes` characters, minus room for a header. */
function chunkFor(textBytes: number): number {
  const room = Math.max(textBytes - 512, 1024);
  return Math.max(Math.min(Math.floor(((room * 76) / 77 / 4) * 3), MAX_CHUNK), 256);
}

/**
 * How many raw bytes one round trip can carry on this session. Measured once:
 * a limit set too low by the caller must make transfers slower, never wrong.
 */
async function chunkSize(session: Environment, signal?: AbortSignal): Promise<number> {
  const known = chunkSizes.get(session);
  if (known !== undefined) return known;
  const probe = await session.execute(`head -c ${CALIBRATION_BYTES} /dev/zero | tr '\\0' x`, {
    isolated: true,
    signal,
    cwd: "/",
  });
  let kept = CALIBRATION_BYTES;
  if (probe.truncated) {
    const cut = /\[OUTPUT TRUNCATED - (\d+) bytes omitted out of (\d+) total\]/.exec(probe.output);
    kept = cut ? Number(cut[2]) - Number(cut[1]) : 4096;
  } else if (probe.exitCode !== 0 || probe.output.length < CALIBRATION_BYTES) {
    throw new BackendIoError(
      `the ${session.backend} backend could not run head/tr (exit ${probe.exitCode}): ${probe.output.slice(0, 300)}`,
    );
  }
  const size = chunkFor(kept);
  chunkSizes.set(session, size);
  return size;
}

function checkFinished(result: { timedOut: boolean; interrupted: boolean; output: string }, what: string): void {
  if (result.timedOut) throw new BackendIoError(`${what} timed out on the backend`);
  if (result.interrupted) throw new BackendIoError(`${what} was interrupted`);
}

/**
 * Runs `producer` (bash) on the backend from the session's state without
 * changing it, and returns its exit code and exact stdout.
 *
 * Hot path: one round trip, and besides the producer's own commands only
 * `base64` runs (each process costs about as much as bash itself). The
 * producer's stdout is held base64-encoded in a variable; its stderr goes to
 * the output first, before a header line with a per-call token. Output too
 * big for one reply is parked in a temp file and fetched in pieces.
 */
export async function runOnBackend(
  session: Environment,
  producer: string,
  options: BackendRunOptions = {},
): Promise<BackendRunResult> {
  const chunk = await chunkSize(session, options.signal);
  const textChunk = Math.floor((chunk / 3) * 4);
  const token = `SWIO_${randomBytes(6).toString("hex")}`;
  // The producer runs in a subshell: an `exit` or a trap in it cannot touch the session's own EXIT trap.
  const script = [
    `{ __sw_o=$( ( ${producer}
) 2>&3 | base64; builtin exit \${PIPESTATUS[0]}); __sw_rc=$?; } 3>&1`,
    // The rest handles only ASCII: the C locale makes bash's string operations byte-fast (this call is isolated, so the change goes nowhere).
    `LC_ALL=C; __sw_n=\${#__sw_o}; __sw_f= __sw_z=raw`,
    // Too big for one reply: park it in a temp file, gzipped when gzip exists (source text shrinks 4-10x, so fewer round trips).
    `if [ "$__sw_n" -gt ${textChunk} ]; then`,
    `  __sw_f=$(mktemp "\${TMPDIR:-/tmp}/shellwright-io.XXXXXX") || exit 97`,
    `  if ${options.compress === false ? "false" : "command -v gzip >/dev/null 2>&1"} && builtin printf '%s' "$__sw_o" | base64 -d | gzip -1 -c | base64 > "$__sw_f"; then __sw_z=gz; else builtin printf '%s' "$__sw_o" > "$__sw_f"; fi`,
    `  __sw_n=$(wc -c < "$__sw_f"); __sw_o=$(head -c ${textChunk} "$__sw_f")`,
    `  [ "$__sw_n" -gt ${textChunk} ] || { rm -f "$__sw_f"; __sw_f=; }`,
    `fi`,
    `builtin printf '\\n${token} %s %s %s %s\\n%s' "$__sw_rc" "$__sw_n" "$__sw_z" "$__sw_f" "\${__sw_o:0:${textChunk}}"`,
  ].join("\n");
  const run = (command: string, stdin?: Uint8Array | string) =>
    session.execute(command, {
      isolated: true,
      ...(stdin === undefined ? {} : { stdin }),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });

  const first = await run(script, options.stdin);
  checkFinished(first, "the file operation");
  const at = first.output.lastIndexOf(`\n${token} `);
  const header = at === -1 ? null : /^(\d+) (\d+) (raw|gz) (.*)\n/.exec(first.output.slice(at + token.length + 2));
  if (first.truncated)
    throw new BackendIoError(
      "the reply was cut by the session's output limit (the command printed too much to stderr)",
    );
  if (!header && first.exitCode === 126) {
    throw new BackendIoError(
      `the terminal's current directory (${options.cwd ?? session.cwd}) cannot be entered: ${first.output.trim().slice(0, 300)}. Use the terminal to cd to a directory that exists, then try again`,
    );
  }
  if (!header) {
    throw new BackendIoError(
      `unexpected reply from the ${session.backend} backend (exit ${first.exitCode}): ${first.output.slice(0, 500)}`,
    );
  }
  const [, rc, size, encoding, tempPath] = header as unknown as [string, string, string, string, string];
  const stderr = first.output.slice(0, at);
  const total = Number(size);
  const parts: string[] = [first.output.slice(at + token.length + 2 + header[0].length)];
  let have = parts[0]!.length;
  try {
    // Without a temp file everything came at once ($(…) may have dropped a trailing newline of the base64 text).
    while (tempPath !== "" && have < total) {
      const take = Math.min(textChunk, total - have);
      const last = have + take >= total;
      const next = await run(
        `tail -c +${have + 1} ${shellQuote(tempPath)} | head -c ${take}${last ? `; rm -f ${shellQuote(tempPath)}` : ""}`,
      );
      checkFinished(next, "reading the result");
      if (next.truncated || next.output.length !== take) {
        throw new BackendIoError(
          `reading the result from the backend returned ${next.output.length} of ${take} characters`,
        );
      }
      parts.push(next.output);
      have += take;
    }
  } catch (error) {
    await session.execute(`rm -f ${shellQuote(tempPath)}`, { isolated: true }).catch(() => undefined);
    throw error;
  }
  const bytes = Buffer.from(parts.join(""), "base64");
  return { exitCode: Number(rc), stdout: encoding === "gz" ? gunzipSync(bytes) : bytes, stderr: stderr.slice(0, 4000) };
}

/** Splits `key value` header lines, up to a line `--`, from the bytes after it. */
export function parseFramed(bytes: Buffer): { fields: Map<string, string>; body: Buffer; lines: string[] } {
  const separator = bytes.indexOf("\n--\n");
  const headText = (separator === -1 ? bytes : bytes.subarray(0, separator)).toString("utf8");
  const fields = new Map<string, string>();
  const lines = headText.split("\n");
  for (const line of lines) {
    const space = line.indexOf(" ");
    if (space > 0 && !fields.has(line.slice(0, space))) fields.set(line.slice(0, space), line.slice(space + 1));
  }
  return { fields, body: separator === -1 ? Buffer.alloc(0) : bytes.subarray(separator + 4), lines };
}

/**
 * A path as a bash word: `~`, `~/…` and `~user/…` are left for bash to expand on
 * the backend (its HOME, not ours); everything else is quoted literally.
 */
export function quotePath(path: string): string {
  const tilde = /^~([A-Za-z0-9._-]*)(\/.*)?$/.exec(path);
  if (tilde) {
    const rest = tilde[2] ?? "";
    return `~${tilde[1]}${rest === "" ? "" : rest === "/" ? "/" : `/${shellQuote(rest.slice(1))}`}`;
  }
  return shellQuote(path);
}

/**
 * Bash that sets `$__sw_r` to the absolute, symlink-free form of `$__sw_p` (which
 * may not exist yet), with GNU realpath, busybox readlink, or plain bash.
 */
export const RESOLVE_PATH = [
  '__sw_r=$(realpath -m -- "$__sw_p" 2>/dev/null) || __sw_r=$(readlink -f -- "$__sw_p" 2>/dev/null) || __sw_r=',
  '[ -n "$__sw_r" ] || { case $__sw_p in /*) __sw_r=$__sw_p ;; *) __sw_r=$PWD/$__sw_p ;; esac; }',
].join("\n");
