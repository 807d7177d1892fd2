/**
 * A watch on a directory, the same on every backend: one long isolated call
 * that lists the tree (GNU find) every `intervalMs` and reports what appeared,
 * changed (mtime, size or type) or went, as NUL-separated records on its
 * output. A poll, not inotify: it needs nothing installed but bash and find,
 * and no backend (a container, an ssh host, a box, a gateway) has to forward
 * kernel events. A change undone within one interval is not seen; two
 * changes to one file within one interval are one event. The temp files of
 * the atomic writes (`.shellwright-tmp.*`) are not reported: the rename that
 * ends such a write is the file's creation or change.
 */

import type { Environment } from "../core/environment.js";
import { FileError, InvalidOptionError, UnsupportedError } from "../core/errors.js";
import { describe } from "../core/options.js";
import { quotePath } from "../tools/shared/backend-io.js";

export interface FileEvent {
  type: "create" | "modify" | "remove";
  /** Absolute on the backend. */
  path: string;
  /** What the entry is (for a removal: what it was). */
  entryType: "file" | "dir" | "symlink" | "other";
  /** Its size when the poll saw it (for a removal: when last seen), as find reports it. */
  sizeBytes: number;
}

export interface WatchOptions {
  /** Watch the whole tree below the directory (default), or only its own entries. */
  recursive?: boolean;
  /** How often the tree is listed. @default 500 */
  intervalMs?: number;
  /** Aborting ends the watch. */
  signal?: AbortSignal;
}

export interface FileWatcher {
  /** Ends the watch (its command on the backend too); resolves once it ended. */
  close(): Promise<void>;
  /** Resolves when the watch ended: closed, aborted, the directory removed, or the session closed. */
  readonly ended: Promise<void>;
}

/** The longest a timer may wait in Node (about 24.8 days): the watch runs until it is closed. */
const FOREVER_MS = 2 ** 31 - 1;
const TYPES: Record<string, FileEvent["entryType"]> = { f: "file", d: "dir", l: "symlink" };
const EVENTS: Record<string, FileEvent["type"]> = { C: "create", M: "modify", D: "remove" };

/** The watch loop: `R` once armed, then `C|M|D path type size` per change; `X` the path is missing, `U` no GNU find, `G` the directory went. */
export function watchScript(path: string, recursive: boolean, intervalMs: number): string {
  const depth = recursive ? "" : " -maxdepth 1";
  const seconds = (intervalMs / 1000).toFixed(3);
  return [
    `__sw_p=${quotePath(path)}`,
    `[ -d "$__sw_p" ] || { printf 'X\\0'; exit 0; }`,
    `find / -maxdepth 0 -printf '' >/dev/null 2>&1 || { printf 'U\\0'; exit 0; }`,
    `__sw_a=$(builtin cd -- "$__sw_p" && builtin pwd) || { printf 'X\\0'; exit 0; }`,
    `declare -A __sw_old=() __sw_new=()`,
    `__sw_scan() { __sw_new=(); while IFS= read -r -d '' __sw_k && IFS= read -r -d '' __sw_v; do __sw_new[$__sw_k]=$__sw_v; done < <(find "$__sw_a/" -mindepth 1${depth} ! -name '.shellwright-tmp.*' -printf '%P\\0%y %T@ %s\\0' 2>/dev/null); }`,
    `__sw_keep() { __sw_old=(); for __sw_k in "\${!__sw_new[@]}"; do __sw_old[$__sw_k]=\${__sw_new[$__sw_k]}; done; }`,
    `__sw_scan; __sw_keep; printf 'R\\0%s\\0' "$__sw_a"`,
    `while :; do`,
    `  sleep ${seconds} || sleep 1`,
    `  [ -d "$__sw_a" ] || { printf 'G\\0'; exit 0; }`,
    `  __sw_scan`,
    `  for __sw_k in "\${!__sw_new[@]}"; do`,
    `    if [[ -z \${__sw_old[$__sw_k]+x} ]]; then printf 'C\\0%s\\0%s\\0%s\\0' "$__sw_k" "\${__sw_new[$__sw_k]%% *}" "\${__sw_new[$__sw_k]##* }"`,
    `    elif [[ \${__sw_old[$__sw_k]} != "\${__sw_new[$__sw_k]}" ]]; then printf 'M\\0%s\\0%s\\0%s\\0' "$__sw_k" "\${__sw_new[$__sw_k]%% *}" "\${__sw_new[$__sw_k]##* }"; fi`,
    `  done`,
    `  for __sw_k in "\${!__sw_old[@]}"; do [[ -n \${__sw_new[$__sw_k]+x} ]] || printf 'D\\0%s\\0%s\\0%s\\0' "$__sw_k" "\${__sw_old[$__sw_k]%% *}" "\${__sw_old[$__sw_k]##* }"; done`,
    `  __sw_keep`,
    `done`,
  ].join("\n");
}

export function watchFiles(
  env: Environment,
  path: string,
  onEvent: (event: FileEvent) => void,
  options: WatchOptions,
): Promise<FileWatcher> {
  const intervalMs = options.intervalMs ?? 500;
  if (typeof intervalMs !== "number" || !Number.isFinite(intervalMs) || intervalMs < 10)
    throw new InvalidOptionError(
      "intervalMs",
      `intervalMs must be a number of milliseconds, at least 10, got ${describe(intervalMs)}`,
    );
  if (options.recursive !== undefined && typeof options.recursive !== "boolean")
    throw new InvalidOptionError("recursive", `recursive must be a boolean, got ${describe(options.recursive)}`);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new InvalidOptionError("signal", `signal must be an AbortSignal, got ${describe(options.signal)}`);
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  options.signal?.addEventListener("abort", stop, { once: true });

  return new Promise<FileWatcher>((resolve, reject) => {
    let base: string | undefined;
    let pending = "";
    let armed = false;
    const fields: string[] = [];
    const onOutput = (text: string): void => {
      pending += text;
      const parts = pending.split("\0");
      pending = parts.pop()!;
      fields.push(...parts);
      while (fields.length > 0) {
        const code = fields[0]!;
        if (code === "R") {
          if (fields.length < 2) return;
          base = fields[1]!;
          fields.splice(0, 2);
          armed = true;
          resolve(watcher);
        } else if (EVENTS[code] !== undefined) {
          if (fields.length < 4) return;
          const [, relative, type, size] = fields.splice(0, 4) as [string, string, string, string];
          onEvent({
            type: EVENTS[code],
            path: `${base === "/" ? "" : base}/${relative}`,
            entryType: TYPES[type] ?? "other",
            sizeBytes: Number(size) || 0,
          });
        } else {
          fields.shift();
          if (code === "X")
            reject(
              new FileError("not_found", path, `'${path}' is not a directory that exists`, { backend: env.backend }),
            );
          if (code === "U")
            reject(
              new UnsupportedError(
                `watching files needs GNU find on the ${env.backend} backend (its find has no -printf)`,
                {
                  backend: env.backend,
                },
              ),
            );
        }
      }
    };
    const ended = env
      .execute(watchScript(path, options.recursive !== false, intervalMs), {
        isolated: true,
        cwd: undefined,
        timeoutMs: FOREVER_MS,
        signal: controller.signal,
        onOutput,
      })
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        options.signal?.removeEventListener("abort", stop);
        if (!armed)
          reject(
            new FileError("failed", path, `the watch of '${path}' ended before it started`, { backend: env.backend }),
          );
      });
    const watcher: FileWatcher = {
      ended,
      close: async () => {
        controller.abort();
        await ended;
      },
    };
  });
}
