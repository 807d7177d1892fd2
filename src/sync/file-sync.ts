/**
 * Decides what to transfer so that an unchanged set of files costs nothing:
 * no transfer and no process, only a walk of lstat calls, and inside the
 * interval after a sync not even that.
 *
 * - single files: transferred when their (mtime, size, mode) changed; removed
 *   remotely when their local file is gone;
 * - directories: a fingerprint of (path, mtime, size, mode) per file; an equal
 *   fingerprint skips the directory, a different one mirrors it (extras deleted);
 * - remote directories, once created, are remembered;
 * - the first sync always runs, and so does `force`;
 * - any failed transfer drops everything remembered (the remote side may have
 *   been wiped or recreated), so the next sync starts from scratch.
 *
 * Calls are serialised: a sync that starts while another runs waits for it.
 */

import { dirname } from "node:path/posix";
import { SyncError } from "../core/errors.js";
import { sameStamp, stampFile, treeFingerprint, walkTree, type FileStamp } from "./fingerprint.js";
import type {
  DirectoryMirror,
  FileUpload,
  SyncDirectorySpec,
  SyncFileSpec,
  SyncReport,
  SyncTransfer,
} from "./types.js";

export interface FileSyncOptions {
  files?: readonly SyncFileSpec[];
  directories?: readonly SyncDirectorySpec[];
  /**
   * Inside this many milliseconds after a sync, the next one returns at once
   * without looking at the files.
   * @default 5000
   */
  intervalMs?: number;
  /** Transfer everything on every sync, ignoring what is remembered (debugging, benchmarks). @default false */
  force?: boolean;
  /** The backend's name, for error messages. */
  backend?: string;
  /** The clock, in milliseconds; tests pass their own. @default Date.now */
  now?: () => number;
}

export interface SyncCallOptions {
  /** Transfer everything this time. */
  force?: boolean;
}

export const DEFAULT_SYNC_INTERVAL_MS = 5000;

/** "absent" remembers that a listed local file was missing and its remote copy was removed. */
type FileState = FileStamp | "absent";

export class FileSync {
  readonly #transfer: SyncTransfer;
  readonly #files: readonly Required<SyncFileSpec>[];
  readonly #directories: readonly SyncDirectorySpec[];
  readonly #intervalMs: number;
  readonly #force: boolean;
  readonly #backend: string | undefined;
  readonly #now: () => number;

  /** Keyed by remote path. */
  readonly #fileStates = new Map<string, FileState>();
  /** Keyed by remote root: what was last mirrored there. */
  readonly #treeStates = new Map<string, Map<string, string>>();
  readonly #createdDirectories = new Set<string>();
  #lastSyncAt: number | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(transfer: SyncTransfer, options: FileSyncOptions = {}) {
    this.#transfer = transfer;
    this.#files = (options.files ?? []).map((file) => ({ ...file, mode: file.mode ?? 0o600 }));
    this.#directories = [...(options.directories ?? [])];
    this.#intervalMs = options.intervalMs ?? DEFAULT_SYNC_INTERVAL_MS;
    this.#force = options.force ?? false;
    this.#backend = options.backend;
    this.#now = options.now ?? Date.now;
  }

  /** True when there is anything to sync at all. */
  get configured(): boolean {
    return this.#files.length > 0 || this.#directories.length > 0;
  }

  /** Brings the remote side up to date. Throws SyncError (and forgets everything) when a transfer fails. */
  sync(options: SyncCallOptions = {}): Promise<SyncReport> {
    const run = this.#queue.then(() => this.#syncOnce(options.force === true || this.#force));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Forget what the remote side holds (it was recreated): the next sync transfers everything. */
  invalidate(): void {
    this.#fileStates.clear();
    this.#treeStates.clear();
    this.#createdDirectories.clear();
    this.#lastSyncAt = undefined;
  }

  async #syncOnce(force: boolean): Promise<SyncReport> {
    const report: SyncReport = { skipped: undefined, uploaded: [], removed: [], mirrored: [], createdDirectories: [] };
    const startedAt = this.#now();
    if (!force && this.#lastSyncAt !== undefined && startedAt - this.#lastSyncAt < this.#intervalMs) {
      return { ...report, skipped: "interval" };
    }
    if (force) this.invalidate();

    try {
      const { uploads, removals, stamps } = await this.#planFiles();
      const mirrors = await this.#planDirectories();

      const wanted = new Set<string>();
      for (const upload of uploads) wanted.add(dirname(upload.remote));
      for (const { mirror } of mirrors) {
        wanted.add(dirname(mirror.remote));
        wanted.add(mirror.remote);
        for (const entry of mirror.changed) wanted.add(dirname(`${mirror.remote}/${entry.path}`));
      }
      const create = [...wanted]
        .filter((dir) => dir !== "." && dir !== "/" && !this.#createdDirectories.has(dir))
        .sort();
      if (create.length > 0) {
        await this.#transfer.makeDirectories(create);
        for (const dir of create) this.#createdDirectories.add(dir);
        report.createdDirectories = create;
      }

      if (uploads.length > 0) {
        await this.#transfer.uploadFiles(uploads);
        for (const upload of uploads) this.#fileStates.set(upload.remote, stamps.get(upload.remote)!);
        report.uploaded = uploads.map((upload) => upload.remote);
      }
      if (removals.length > 0) {
        await this.#transfer.removeFiles(removals);
        for (const remote of removals) this.#fileStates.set(remote, "absent");
        report.removed = removals;
      }
      for (const { mirror, fingerprint } of mirrors) {
        await this.#transfer.mirrorDirectory(mirror);
        this.#treeStates.set(mirror.remote, fingerprint);
        report.mirrored.push(mirror.remote);
      }
    } catch (error) {
      this.invalidate();
      const why = error instanceof Error ? error.message : String(error);
      throw new SyncError(`File sync failed, so the next sync will transfer everything again: ${why}`, {
        cause: error,
        ...(this.#backend === undefined ? {} : { backend: this.#backend }),
      });
    }
    this.#lastSyncAt = startedAt;
    return report;
  }

  async #planFiles(): Promise<{ uploads: FileUpload[]; removals: string[]; stamps: Map<string, FileStamp> }> {
    const uploads: FileUpload[] = [];
    const removals: string[] = [];
    const stamps = new Map<string, FileStamp>();
    const current = await Promise.all(this.#files.map((file) => stampFile(file.local)));
    this.#files.forEach((file, index) => {
      const stamp = current[index];
      const known = this.#fileStates.get(file.remote);
      if (stamp === undefined) {
        // Gone locally: remove the remote copy once (a credential that was revoked must not linger).
        if (known !== "absent") removals.push(file.remote);
        return;
      }
      if (known !== "absent" && sameStamp(known, stamp)) return;
      stamps.set(file.remote, stamp);
      uploads.push({ local: file.local, remote: file.remote, mode: file.mode });
    });
    return { uploads, removals, stamps };
  }

  async #planDirectories(): Promise<{ mirror: DirectoryMirror; fingerprint: Map<string, string> }[]> {
    const plans: { mirror: DirectoryMirror; fingerprint: Map<string, string> }[] = [];
    for (const directory of this.#directories) {
      const entries = await walkTree(directory.local);
      // A missing local directory leaves the remote one alone: deleting a whole
      // remote tree because of a typo or an unmounted disk would lose data.
      if (entries === undefined) continue;
      const fingerprint = treeFingerprint(entries);
      const known = this.#treeStates.get(directory.remote);
      if (known !== undefined && sameFingerprint(known, fingerprint)) continue;
      plans.push({
        fingerprint,
        mirror: {
          local: directory.local,
          remote: directory.remote,
          entries,
          changed: entries.filter((entry) => known?.get(entry.path) !== fingerprint.get(entry.path)),
          removed: known === undefined ? [] : [...known.keys()].filter((path) => !fingerprint.has(path)),
          full: known === undefined,
        },
      });
    }
    return plans;
  }
}

function sameFingerprint(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [path, stamp] of a) if (b.get(path) !== stamp) return false;
  return true;
}
