/**
 * `files(env)`: the environment's files from a program, on every backend,
 * over the engine the file tools use (tools/shared/backend-io.ts: exact bytes
 * both ways, through `execute` only, isolated so no call moves the session's
 * state). Writes are the tools' atomic writes (temp file, write lock, rename,
 * hash verified) and go through the same guard: `safeRoot` confines every
 * write, removal and mkdir; `denyPaths` refuses paths (none by default here:
 * the caller is a program, not a model). Relative paths start at the
 * session's cwd; `~` is the backend's home. docs/sdk.md describes it.
 */

import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import { ReadableStream } from "node:stream/web";
import type { Environment } from "../core/environment.js";
import { FileError, InvalidOptionError } from "../core/errors.js";
import { describe, plainObject, rejectUnknown } from "../core/options.js";
import { parseFramed, runOnBackend, shellQuote } from "../tools/shared/backend-io.js";
import { probeForWrite, writeAtomic } from "../tools/files/atomic-write.js";
import { validateGuardOptions, writeDenied, type WriteGuardOptions } from "../tools/files/path-guard.js";
import { enterVerifiedDirectory } from "../tools/files/verified-directory.js";
import { entryProbeScript, existsScript, listScript, readChunkScript, statScript } from "./file-scripts.js";
import { parseEntries, type FileEntry } from "./file-entries.js";
import { uploadAtomic } from "./file-upload.js";
import { watchFiles, type FileEvent, type FileWatcher, type WatchOptions } from "./file-watch.js";

export type { FileEntry, FileType } from "./file-entries.js";
export type { FileEvent, FileWatcher, WatchOptions };

/** How much one call carries: a read's chunk (base64 on the way: a third more) and an upload's piece. */
export interface TransferSizes {
  readChunkBytes: number;
  uploadPieceBytes: number;
}

/** 4 MiB each way: a piece, base64 in a JSON body, stays under a gateway's default body limit (8 MiB). */
export const TRANSFER_SIZES: TransferSizes = { readChunkBytes: 4 * 1024 * 1024, uploadPieceBytes: 4 * 1024 * 1024 };

export interface FilesOptions {
  /** Every write, removal and mkdir must land inside this directory (as the backend resolves it). */
  safeRoot?: string;
  /** Paths never written or removed (entries ending in `/` cover a directory; `~/` is the backend's home). @default none */
  denyPaths?: readonly string[];
}

export interface CallOptions {
  /** Aborting stops the operation's command on the backend. */
  signal?: AbortSignal;
}

export interface WriteOptions extends CallOptions {
  /** Permission bits of the file (0o600); default: an existing file's, else 0666 less the umask. */
  mode?: number;
}

/** Bytes or text, whole or as a stream (a Node Readable, a web ReadableStream, any async iterable). */
export type WriteData = string | Uint8Array | AsyncIterable<Uint8Array | string>;

export interface EnvironmentFiles {
  /** The file's content as text (UTF-8; an invalid byte becomes U+FFFD). */
  read(path: string, options?: CallOptions & { format?: "text" }): Promise<string>;
  /** The file's exact bytes. */
  read(path: string, options: CallOptions & { format: "bytes" }): Promise<Uint8Array>;
  /** The file's bytes as a stream, fetched a round trip at a time as it is read (a download of any size). */
  read(path: string, options: CallOptions & { format: "stream" }): Promise<ReadableStream<Uint8Array>>;
  /** Replaces the file's content atomically (parents created); resolves once the bytes on disk were verified. */
  write(path: string, data: WriteData, options?: WriteOptions): Promise<{ path: string; bytesWritten: number }>;
  /** The entries of a directory, down to `depth` levels (1: its own entries), sorted by path. */
  list(path: string, options?: CallOptions & { depth?: number }): Promise<FileEntry[]>;
  /** The entry at `path` (a symlink itself, not its target). */
  stat(path: string, options?: CallOptions): Promise<FileEntry>;
  exists(path: string, options?: CallOptions): Promise<boolean>;
  /** Removes a file, a symlink or an empty directory; `recursive` removes a directory with everything in it. */
  remove(path: string, options?: CallOptions & { recursive?: boolean }): Promise<void>;
  /** Makes a directory (its parents too, unless `parents: false`); resolves false when it already existed. */
  mkdir(path: string, options?: CallOptions & { parents?: boolean }): Promise<boolean>;
  /**
   * Moves an entry to `destination` (its parents made), replacing a file or an empty directory
   * there, as rename(2) does; a symlink moves as the link. Resolves to the entry at its new place.
   */
  rename(source: string, destination: string, options?: CallOptions): Promise<FileEntry>;
  /** Calls `onEvent` for every file created, modified or removed under `path` (docs/sdk.md: how it sees them). */
  watch(path: string, onEvent: (event: FileEvent) => void, options?: WatchOptions): Promise<FileWatcher>;
}

/** The files of `env`. `options` guard what it writes. */
export function files(env: Environment, options: FilesOptions = {}): EnvironmentFiles {
  const raw = plainObject("options", options);
  rejectUnknown("files", raw, ["safeRoot", "denyPaths"]);
  const guard: WriteGuardOptions = { denyPaths: options.denyPaths ?? [], ...pick(options, "safeRoot") };
  validateGuardOptions(guard);
  return new Files(env, guard, TRANSFER_SIZES);
}

const pick = <T extends object, K extends keyof T>(object: T, key: K): Partial<Pick<T, K>> =>
  object[key] === undefined ? {} : ({ [key]: object[key] } as Partial<Pick<T, K>>);

function checkPath(path: unknown, name = "path"): string {
  if (typeof path !== "string" || path === "")
    throw new InvalidOptionError(name, `${name} must be a non-empty string, got ${describe(path)}`);
  if (/[\n\0]/.test(path))
    throw new InvalidOptionError(name, `${name} must not contain a newline or NUL byte, got ${describe(path)}`);
  return path;
}

/** Exported for tests, which shrink the transfer sizes to cross chunk boundaries cheaply; use `files(env)`. */
export class Files implements EnvironmentFiles {
  readonly #env: Environment;
  readonly #guard: WriteGuardOptions;
  readonly #sizes: TransferSizes;

  constructor(env: Environment, guard: WriteGuardOptions, sizes: TransferSizes) {
    this.#env = env;
    this.#guard = guard;
    this.#sizes = sizes;
  }

  #error(reason: FileError["reason"], path: string, message: string): FileError {
    return new FileError(reason, path, message, { backend: this.#env.backend });
  }

  /** A kind line that says why `path` is not what the call needs, as the error to throw. */
  #kindError(kind: string | undefined, path: string): FileError {
    if (kind === "missing") return this.#error("not_found", path, `No such file or directory: '${path}'`);
    if (kind === "dir") return this.#error("is_directory", path, `'${path}' is a directory`);
    if (kind === "notdir") return this.#error("not_directory", path, `'${path}' is not a directory`);
    if (kind === "special")
      return this.#error("not_regular", path, `'${path}' is not a regular file (a device, FIFO or socket)`);
    if (kind === "unreadable") return this.#error("denied", path, `Permission denied: '${path}'`);
    return this.#error("failed", path, `unexpected reply from the ${this.#env.backend} backend for '${path}'`);
  }

  read(path: string, options?: CallOptions & { format?: "text" }): Promise<string>;
  read(path: string, options: CallOptions & { format: "bytes" }): Promise<Uint8Array>;
  read(path: string, options: CallOptions & { format: "stream" }): Promise<ReadableStream<Uint8Array>>;
  async read(
    path: string,
    options: CallOptions & { format?: "text" | "bytes" | "stream" } = {},
  ): Promise<string | Uint8Array | ReadableStream<Uint8Array>> {
    checkPath(path);
    const format = options.format ?? "text";
    if (!["text", "bytes", "stream"].includes(format))
      throw new InvalidOptionError("format", `format must be "text", "bytes" or "stream", got ${describe(format)}`);
    const chunks = this.#chunks(path, options.signal);
    // The first chunk is fetched now: a missing file rejects read() itself, not the stream later.
    const first = await chunks.next();
    const rest = async function* (): AsyncGenerator<Uint8Array> {
      if (first.done !== true) yield first.value;
      yield* chunks;
    };
    if (format === "stream") return ReadableStream.from(rest());
    const parts: Uint8Array[] = [];
    for await (const part of rest()) parts.push(part);
    const bytes = Buffer.concat(parts);
    return format === "bytes" ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) : bytes.toString("utf8");
  }

  /** The file from its start, a chunk a call, until a short chunk (its end). */
  async *#chunks(path: string, signal: AbortSignal | undefined): AsyncGenerator<Uint8Array> {
    const size = this.#sizes.readChunkBytes;
    for (let offset = 0; ; offset += size) {
      const body = await this.#readChunk(path, offset, size, signal);
      if (body.length > 0) yield body;
      if (body.length < size) return;
    }
  }

  /**
   * One chunk, taken from the call's output stream (`onOutput`), which no
   * output limit cuts, rather than from its result: a round trip then carries
   * megabytes instead of the session's maxOutputBytes.
   */
  async #readChunk(path: string, offset: number, size: number, signal: AbortSignal | undefined): Promise<Buffer> {
    const token = `SWRD_${randomBytes(6).toString("hex")}`;
    let text = "";
    const result = await this.#env.execute(readChunkScript(path, offset, size, token), {
      isolated: true,
      ...(signal === undefined ? {} : { signal }),
      onOutput: (chunk) => (text += chunk),
    });
    if (result.interrupted) throw this.#error("failed", path, `reading '${path}' was interrupted`);
    if (result.timedOut) throw this.#error("failed", path, `reading '${path}' timed out`);
    const header = text.indexOf(`\n${token} kind `);
    const kind = header < 0 ? undefined : /^kind (\w+)/.exec(text.slice(header + token.length + 2))?.[1];
    if (kind !== "file") throw this.#kindError(kind, path);
    // tail ends by SIGPIPE (141) when head has its chunk and the file goes on.
    const end = text.lastIndexOf(`\n${token} end `);
    const statuses = end < 0 ? undefined : /^end (\d+) (\d+)/.exec(text.slice(end + token.length + 2));
    if (statuses === undefined || statuses === null || !/^(0|141)$/.test(statuses[1]!))
      throw this.#error(
        "failed",
        path,
        `could not read '${path}' (${statuses ? `tail exited ${statuses[1]}` : "no end"})`,
      );
    const start = text.indexOf("\n", header + 1) + 1;
    return Buffer.from(text.slice(start, end), "base64");
  }

  async write(
    path: string,
    data: WriteData,
    options: WriteOptions = {},
  ): Promise<{ path: string; bytesWritten: number }> {
    checkPath(path);
    const mode = checkMode(options.mode);
    const { signal } = options;
    if (typeof data !== "string" && !(data instanceof Uint8Array) && !isAsyncIterable(data))
      throw new InvalidOptionError(
        "data",
        `data must be a string, a Uint8Array or an async iterable of them (a stream), got ${describe(data)}`,
      );
    const probe = await probeForWrite(this.#env, path, { guard: this.#guard, readAll: false, sampleBytes: 0, signal });
    if (probe.denied !== undefined) throw this.#error("denied", path, probe.denied);
    if (probe.kind === "dir") throw this.#error("is_directory", path, `'${path}' is a directory`);
    if (probe.kind === "special")
      throw this.#error("not_regular", path, `'${path}' is not a regular file (a device, FIFO or socket)`);
    const target = { resolved: probe.resolved, mode: mode ?? probe.mode, path };
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data instanceof Uint8Array ? data : undefined;
    if (bytes !== undefined && bytes.length <= this.#sizes.uploadPieceBytes) {
      try {
        const written = await writeAtomic(this.#env, probe.resolved, bytes, { mode: target.mode, signal });
        return { path: probe.resolved, bytesWritten: written.bytesWritten };
      } catch (error) {
        throw this.#error("failed", path, error instanceof Error ? error.message : String(error));
      }
    }
    const source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string> =
      bytes === undefined ? (data as AsyncIterable<Uint8Array>) : [bytes];
    const written = await uploadAtomic(this.#env, target, source, this.#sizes.uploadPieceBytes, signal);
    return { path: probe.resolved, bytesWritten: written };
  }

  async list(path: string, options: CallOptions & { depth?: number } = {}): Promise<FileEntry[]> {
    checkPath(path);
    const depth = options.depth ?? 1;
    if (!Number.isInteger(depth) || depth < 1)
      throw new InvalidOptionError("depth", `depth must be a positive integer, got ${describe(depth)}`);
    const { fields, body } = await this.#framed(listScript(path, depth), path, options.signal);
    if (fields.get("kind") !== "dir") throw this.#kindError(fields.get("kind"), path);
    return parseEntries(body, fields.get("abs") ?? path).sort((a, b) =>
      a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
    );
  }

  async stat(path: string, options: CallOptions = {}): Promise<FileEntry> {
    checkPath(path);
    const { fields, body } = await this.#framed(statScript(path), path, options.signal);
    if (fields.get("kind") !== "entry") throw this.#kindError(fields.get("kind"), path);
    const [entry] = parseEntries(body, fields.get("abs") ?? path, true);
    if (entry === undefined) throw this.#kindError("missing", path);
    return entry;
  }

  async exists(path: string, options: CallOptions = {}): Promise<boolean> {
    checkPath(path);
    const { fields } = await this.#framed(existsScript(path), path, options.signal);
    return fields.get("exists") === "yes";
  }

  async remove(path: string, options: CallOptions & { recursive?: boolean } = {}): Promise<void> {
    const entry = await this.#probeEntry(path, options.signal);
    if (entry.kind === "missing") throw this.#kindError("missing", path);
    if (entry.resolved === "/") throw this.#error("denied", path, "Refusing to remove '/'");
    const name = shellQuote(`./${posix.basename(entry.resolved)}`);
    const remove =
      entry.kind !== "dir"
        ? `rm -f -- ${name}`
        : options.recursive === true
          ? `rm -rf -- ${name}`
          : `rmdir -- ${name} 2>/dev/null || { [ -d ${name} ] && echo 'kind not_empty'; exit 0; }`;
    const { fields } = await this.#framed(
      `${enterVerifiedDirectory(entry.parent, { create: false })}\n${remove} || exit 1\necho 'done yes'`,
      path,
      options.signal,
    );
    if (fields.get("kind") === "not_empty")
      throw this.#error("not_empty", path, `'${path}' is a directory that is not empty: pass { recursive: true }`);
    this.#checkMoved(fields, path);
    if (fields.get("done") !== "yes") throw this.#error("failed", path, `could not remove '${path}'`);
  }

  async mkdir(path: string, options: CallOptions & { parents?: boolean } = {}): Promise<boolean> {
    const entry = await this.#probeEntry(path, options.signal);
    if (entry.kind === "dir") return false;
    if (entry.kind !== "missing") throw this.#error("not_directory", path, `'${path}' exists and is not a directory`);
    if (options.parents === false && entry.parentKind !== "dir")
      throw this.#error("not_found", path, `The parent of '${path}' does not exist (pass parents: true to make it)`);
    const { fields } = await this.#framed(
      `${enterVerifiedDirectory(entry.resolved, { create: true })}\necho 'done yes'`,
      path,
      options.signal,
    );
    this.#checkMoved(fields, path);
    if (fields.get("done") !== "yes") throw this.#error("failed", path, `could not make the directory '${path}'`);
    return true;
  }

  async rename(source: string, destination: string, options: CallOptions = {}): Promise<FileEntry> {
    checkPath(destination, "destination");
    const from = await this.#probeEntry(source, options.signal);
    if (from.kind === "missing") throw this.#kindError("missing", source);
    const to = await this.#probeEntry(destination, options.signal);
    const { fields } = await this.#framed(
      [
        enterVerifiedDirectory(to.parent, { create: true }),
        `mv -fT -- ${shellQuote(from.resolved)} ${shellQuote(`./${posix.basename(to.resolved)}`)} || exit 1`,
        `echo 'done yes'`,
      ].join("\n"),
      source,
      options.signal,
    );
    this.#checkMoved(fields, destination);
    if (fields.get("done") !== "yes")
      throw this.#error("failed", source, `could not move '${source}' to '${destination}'`);
    return this.stat(to.resolved, options);
  }

  watch(path: string, onEvent: (event: FileEvent) => void, options: WatchOptions = {}): Promise<FileWatcher> {
    checkPath(path);
    if (typeof onEvent !== "function")
      throw new InvalidOptionError("onEvent", `onEvent must be a function, got ${describe(onEvent)}`);
    return watchFiles(this.#env, path, onEvent, options);
  }

  #checkMoved(fields: Map<string, string>, path: string): void {
    const moved = fields.get("moved");
    if (moved !== undefined)
      throw this.#error(
        "changed",
        path,
        `the directory of '${path}' was replaced meanwhile (it now leads to '${moved}')`,
      );
  }

  /** Where a change to `path` lands (its parent resolved, its name kept) and whether the guard allows it. */
  async #probeEntry(path: string, signal: AbortSignal | undefined) {
    checkPath(path);
    const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
    const name = posix.basename(trimmed);
    if (trimmed === "/" || name === "." || name === "..")
      throw new InvalidOptionError("path", `path must name an entry, got ${describe(path)}`);
    const parent = trimmed.includes("/") ? posix.dirname(trimmed) : ".";
    const { fields } = await this.#framed(entryProbeScript(parent, name, this.#guard.safeRoot), path, signal);
    const parentResolved = fields.get("parent");
    if (parentResolved === undefined) throw this.#kindError(undefined, path);
    const resolved = parentResolved === "/" ? `/${name}` : `${parentResolved}/${name}`;
    const denied = writeDenied(resolved, fields.get("home") ?? "", this.#guard, fields.get("root"));
    if (denied !== undefined) throw this.#error("denied", path, denied);
    return {
      resolved,
      parent: parentResolved,
      kind: fields.get("kind") ?? "missing",
      parentKind: fields.get("parent_kind") ?? "missing",
    };
  }

  async #framed(producer: string, path: string, signal: AbortSignal | undefined) {
    const result = await runOnBackend(this.#env, producer, { signal });
    if (result.exitCode !== 0)
      throw this.#error("failed", path, `'${path}': ${result.stderr.trim() || `exit code ${result.exitCode}`}`);
    return parseFramed(result.stdout);
  }
}

function checkMode(mode: unknown): string | undefined {
  if (mode === undefined) return undefined;
  if (typeof mode !== "number" || !Number.isInteger(mode) || mode < 0 || mode > 0o7777)
    throw new InvalidOptionError(
      "mode",
      `mode must be permission bits from 0 to 0o7777 (e.g. 0o644), got ${describe(mode)}`,
    );
  return mode.toString(8);
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value;
}
