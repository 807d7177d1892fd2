/**
 * One watch of a sandbox directory as envd reports it: events named by their
 * path below the watched directory (`nested/file.txt`), CREATE / WRITE /
 * REMOVE, with the entry's info when asked and it still exists, as inotify
 * gives them: a file created with content is CREATE then WRITE, and a
 * directory is never WRITE (its mtime moving is its entries' events). It runs on
 * Shellwright's watch (src/sdk/file-watch.ts), a poll that works on every
 * backend: a change undone within one interval is not seen.
 */

import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { posix } from "node:path";
import { files, type FileEvent, type FileWatcher } from "../../../sdk/files.js";
import { EventType, FilesystemEventSchema, type FilesystemEvent } from "../gen/filesystem/filesystem_pb.js";
import type { E2bSandbox } from "../sandbox.js";
import { entryInfo } from "./entry.js";
import { resolvePath } from "./paths.js";

const EVENTS: Record<FileEvent["type"], EventType> = {
  create: EventType.CREATE,
  modify: EventType.WRITE,
  remove: EventType.REMOVE,
};

/** The gateway's token masked in a name a command of the sandbox chose (a file named after it). */
function masked(sandbox: E2bSandbox, text: string): string {
  return sandbox.tokenMask === undefined ? text : sandbox.tokenMask.mask(text);
}

export interface WatchRequest {
  path: string;
  recursive: boolean;
  includeEntry: boolean;
}

export interface SandboxWatch {
  readonly path: string;
  /** Stops the watch; resolves once its command ended. */
  close(): Promise<void>;
  /** Resolves once the watch ended and every event it saw was delivered. */
  readonly ended: Promise<void>;
  /** Why the watch ended when nobody closed it, as the error to give the client. */
  endError(): Promise<ConnectError>;
}

/** Starts watching; `onEvent` gets the events in the order they happened. Rejects for a path that is not a directory. */
export async function startWatch(
  sandbox: E2bSandbox,
  request: WatchRequest,
  onEvent: (event: FilesystemEvent) => void,
): Promise<SandboxWatch> {
  const path = resolvePath(sandbox, request.path);
  const fs = files(sandbox.session);
  const stat = await fs.stat(path);
  if (stat.type !== "dir" && stat.type !== "symlink")
    throw new ConnectError(`path '${path}' is not a directory`, Code.InvalidArgument);
  // Entries are looked up one event at a time, so the events keep their order.
  let delivered = Promise.resolve();
  const watcher: FileWatcher = await fs.watch(
    path,
    (event) => {
      // A directory's own mtime moves when an entry is added in it: inotify has no WRITE for that, only the entry's events.
      if (event.type === "modify" && event.entryType === "dir") return;
      delivered = delivered.then(async () => {
        const entry =
          request.includeEntry && event.type !== "remove"
            ? await fs.stat(event.path).then(
                (found) => entryInfo(found, sandbox.tokenMask),
                () => undefined,
              )
            : undefined;
        const send = (type: EventType): void =>
          onEvent(
            create(FilesystemEventSchema, {
              name: masked(sandbox, posix.relative(path, event.path)),
              type,
              ...(entry === undefined ? {} : { entry }),
            }),
          );
        send(EVENTS[event.type]);
        // A file created with content is a create, then a write to inotify (envd's open, then its write).
        if (event.type === "create" && event.entryType === "file" && event.sizeBytes > 0) send(EventType.WRITE);
      });
    },
    { recursive: request.recursive },
  );
  return {
    path,
    close: () => watcher.close(),
    ended: watcher.ended.then(() => delivered),
    endError: async () => {
      if (sandbox.session.closed) return new ConnectError("the sandbox's session closed", Code.Unavailable);
      const there = await fs.exists(path).catch(() => false);
      return there
        ? new ConnectError(`the watch of '${path}' ended`, Code.Internal)
        : new ConnectError(`the watched directory '${path}' was removed`, Code.NotFound);
    },
  };
}
