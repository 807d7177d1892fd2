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

import type { Session } from "../core/session.js";
import { shellQuote } from "../core/script.js";

export { shellQuote };

export interface BackendRunOptions {
  stdin?: Uint8Array | string;
  /** Where the producer runs; default the session's cwd (which does not move). */
  cwd?: string;
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
}

export interface BackendRunResult {
  /** The producer's exit code. */
  exitCode: number;
  /** Its stdout, exactly. */
  stdout: Buffer;
  /** The start of its stderr (up to 4 000 bytes), as text. */
  stderr: string;
}

/** A failure of the tool machinery itself (not of the file operation); runTool turns it into `{error}`. */
export class BackendIoError extends Error {
  override name = "BackendIoError";
}

const STDERR_KEPT = 4000;
/** What the one-time calibration prints to learn the session's output limit. */
const CALIBRATION_BYTES = 512 * 1024;
/** Never ask for more than this per round trip, so memory stays modest. */
const MAX_CHUNK = 384 * 1024;

const chunkSizes = new WeakMap<Session, number>();

/** Raw bytes that base64-encode (76-column lines) into at most `textBytes` characters, minus room for a header. */
function chunkFor(textBytes: number): number {
  const room = Math.max(textBytes - 512, 1024);
  return Math.max(Math.min(Math.floor(((room * 76) / 77 / 4) * 3), MAX_CHUNK), 256);
}

/**
 * How many raw bytes one round trip can carry on this session. Measured once:
 * a limit set too low by the caller must make transfers slower, never wrong.
 */
async function chunkSize(session: Session, signal?: AbortSignal): Promise<number> {
  const known = chunkSizes.get(session);
  if (known !== undefined) return known;
  const probe = await session.execute(`head -c ${CALIBRATION_BYTES} /dev/zero | tr '\\0' x`, { isolated: true, signal, cwd: "/" });
  let kept = CALIBRATION_BYTES;
  if (probe.truncated) {
    const cut = /\[OUTPUT TRUNCATED - (\d+) bytes omitted out of (\d+) total\]/.exec(probe.output);
    kept = cut ? Number(cut[2]) - Number(cut[1]) : 4096;
  } else if (probe.exitCode !== 0 || probe.output.length < CALIBRATION_BYTES) {
    throw new BackendIoError(`the ${session.backend} backend could not run head/tr (exit ${probe.exitCode}): ${probe.output.slice(0, 300)}`);
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
 */
export async function runOnBackend(session: Session, producer: string, options: BackendRunOptions = {}): Promise<BackendRunResult> {
  const chunk = await chunkSize(session, options.signal);
  // The producer runs in a subshell: an `exit` or a trap in it cannot touch the session's own EXIT trap.
  const script = [
    `__sw_t=$(mktemp "\${TMPDIR:-/tmp}/shellwright-io.XXXXXX") || { echo 'shellwright: mktemp failed'; exit 97; }`,
    `( ${producer}\n) > "$__sw_t" 2> "$__sw_t.e"; __sw_rc=$?`,
    `__sw_n=$(wc -c < "$__sw_t"); __sw_en=$(wc -c < "$__sw_t.e")`,
    `printf 'SWIO %s %s %s %s\\n' "$__sw_rc" $__sw_n $__sw_en "$__sw_t"`,
    `{ head -c ${STDERR_KEPT} "$__sw_t.e"; head -c ${chunk} "$__sw_t"; } | base64`,
    `rm -f "$__sw_t.e"; [ "$__sw_n" -gt ${chunk} ] || rm -f "$__sw_t"`,
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
  const header = /^SWIO (\d+) (\d+) (\d+) (.*)\n/.exec(first.output);
  if (!header) {
    throw new BackendIoError(`unexpected reply from the ${session.backend} backend (exit ${first.exitCode}): ${first.output.slice(0, 500)}`);
  }
  if (first.truncated) throw new BackendIoError("the reply was cut by the session's output limit; raise maxOutputChars");
  const [, rc, size, errSize, tempPath] = header as unknown as [string, string, string, string, string];
  const total = Number(size);
  const errKept = Math.min(Number(errSize), STDERR_KEPT);
  const firstBytes = Buffer.from(first.output.slice(header[0].length), "base64");
  const stderr = firstBytes.subarray(0, errKept).toString("utf8");
  const parts: Buffer[] = [firstBytes.subarray(errKept)];
  let have = parts[0]!.length;
  try {
    while (have < total) {
      const take = Math.min(chunk, total - have);
      const last = have + take >= total;
      const next = await run(`tail -c +${have + 1} ${shellQuote(tempPath)} | head -c ${take} | base64${last ? `; rm -f ${shellQuote(tempPath)}` : ""}`);
      checkFinished(next, "reading the result");
      const bytes = Buffer.from(next.output, "base64");
      if (next.truncated || bytes.length !== take) {
        throw new BackendIoError(`reading the result from the backend returned ${bytes.length} of ${take} bytes`);
      }
      parts.push(bytes);
      have += bytes.length;
    }
  } catch (error) {
    await session.execute(`rm -f ${shellQuote(tempPath)}`, { isolated: true }).catch(() => undefined);
    throw error;
  }
  return { exitCode: Number(rc), stdout: Buffer.concat(parts), stderr };
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
