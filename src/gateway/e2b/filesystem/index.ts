/**
 * envd's Filesystem service (spec/envd/filesystem/filesystem.proto) on a
 * Shellwright session, through `files(env)`: every call is a command on the
 * sandbox's backend, so it sees what the session sees, under the same
 * sandboxing. The router authenticates the request and puts its sandbox in
 * the context (SANDBOX) before a handler runs.
 */

import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { FileError } from "../../../core/errors.js";
import { files } from "../../../sdk/files.js";
import {
  type Filesystem,
  ListDirResponseSchema,
  MakeDirResponseSchema,
  MoveResponseSchema,
  RemoveResponseSchema,
  StatResponseSchema,
  CreateWatcherResponseSchema,
  GetWatcherEventsResponseSchema,
  RemoveWatcherResponseSchema,
} from "../gen/filesystem/filesystem_pb.js";
import { SANDBOX, type E2bSandbox } from "../sandbox.js";
import { entryInfo, walkOrder } from "./entry.js";
import { toConnectError } from "./errors.js";
import { checkUser, resolvePath, rpcUser } from "./paths.js";
import { watchDirStream } from "./watch-stream.js";
import { Watchers } from "./watchers.js";

export interface FilesystemService {
  readonly impl: ServiceImpl<typeof Filesystem>;
  /** Ends every watcher (when the server closes). */
  close(): Promise<void>;
}

/** The sandbox of the request, its user checked. */
function sandboxOf(context: HandlerContext): E2bSandbox {
  const sandbox = context.values.get(SANDBOX);
  if (sandbox === undefined) throw new ConnectError("no sandbox for this request", Code.Unauthenticated);
  checkUser(sandbox, rpcUser(context.requestHeader.get("authorization")));
  return sandbox;
}

/** Runs `call` with Shellwright's errors turned into envd's codes. */
async function rpc<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toConnectError(error);
  }
}

export function filesystemService(): FilesystemService {
  const watchers = new Watchers();
  const impl: ServiceImpl<typeof Filesystem> = {
    stat: (request, context) =>
      rpc(async () => {
        const sandbox = sandboxOf(context);
        const entry = await files(sandbox.session).stat(resolvePath(sandbox, request.path), context);
        return create(StatResponseSchema, { entry: entryInfo(entry, sandbox.tokenMask) });
      }),

    makeDir: (request, context) =>
      rpc(async () => {
        const sandbox = sandboxOf(context);
        const path = resolvePath(sandbox, request.path);
        const fs = files(sandbox.session);
        const made = await fs.mkdir(path, context).catch((error: unknown) => {
          if (error instanceof FileError && error.reason === "not_directory")
            throw new ConnectError(`path '${path}' already exists and is not a directory`, Code.AlreadyExists);
          throw error;
        });
        if (!made) throw new ConnectError(`directory '${path}' already exists`, Code.AlreadyExists);
        return create(MakeDirResponseSchema, { entry: entryInfo(await fs.stat(path, context), sandbox.tokenMask) });
      }),

    move: (request, context) =>
      rpc(async () => {
        const sandbox = sandboxOf(context);
        const source = resolvePath(sandbox, request.source, "source");
        const destination = resolvePath(sandbox, request.destination, "destination");
        const entry = await files(sandbox.session).rename(source, destination, context);
        return create(MoveResponseSchema, { entry: entryInfo(entry, sandbox.tokenMask) });
      }),

    listDir: (request, context) =>
      rpc(async () => {
        const sandbox = sandboxOf(context);
        // depth 0 is proto3's "not set": one level, as envd takes it.
        const depth = request.depth === 0 ? 1 : request.depth;
        const entries = await files(sandbox.session).list(resolvePath(sandbox, request.path), {
          depth,
          signal: context.signal,
        });
        return create(ListDirResponseSchema, {
          entries: entries.sort(walkOrder).map((entry) => entryInfo(entry, sandbox.tokenMask)),
        });
      }),

    remove: (request, context) =>
      rpc(async () => {
        const sandbox = sandboxOf(context);
        // envd removes as os.RemoveAll does: a directory with everything in it, nothing there is no error.
        await files(sandbox.session)
          .remove(resolvePath(sandbox, request.path), { recursive: true, signal: context.signal })
          .catch((error: unknown) => {
            if (!(error instanceof FileError && error.reason === "not_found")) throw error;
          });
        return create(RemoveResponseSchema);
      }),

    watchDir: (request, context) => watchDirStream(sandboxOf(context), request, context),

    createWatcher: (request, context) =>
      rpc(async () => {
        const watcherId = await watchers.create(sandboxOf(context), request);
        return create(CreateWatcherResponseSchema, { watcherId });
      }),

    getWatcherEvents: (request, context) =>
      rpc(async () => {
        const events = watchers.take(sandboxOf(context), request.watcherId);
        return create(GetWatcherEventsResponseSchema, { events });
      }),

    removeWatcher: (request, context) =>
      rpc(async () => {
        await watchers.remove(sandboxOf(context), request.watcherId);
        return create(RemoveWatcherResponseSchema);
      }),
  };
  return { impl, close: () => watchers.close() };
}
