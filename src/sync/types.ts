/**
 * File sync, split in two: FileSync (file-sync.ts) decides *what* to transfer
 * and remembers what the remote side already has; a SyncTransfer, supplied by
 * each backend, decides *how* (rsync over the SSH master, an SDK's filesystem
 * API, …). Nothing here knows about any backend.
 *
 * Remote paths are POSIX paths, absolute or relative to the remote home.
 */

/** One local file mirrored to one remote path (a credential, a config file). */
export interface SyncFileSpec {
  /** Path on this machine. */
  local: string;
  /** Path on the backend; relative paths are relative to the remote home. */
  remote: string;
  /**
   * Mode the remote copy gets. Credentials are the common case, so they land private.
   * @default 0o600
   */
  mode?: number;
}

/** One local directory mirrored to one remote directory, remote extras deleted. */
export interface SyncDirectorySpec {
  local: string;
  remote: string;
}

/** A regular file inside a synced directory, as seen locally. */
export interface TreeEntry {
  /** POSIX path relative to the directory root. */
  path: string;
  size: number;
  /** Modification time in milliseconds (fractional: nanosecond stats are kept). */
  mtimeMs: number;
  /** Permission bits (0o7777). */
  mode: number;
}

export interface FileUpload {
  local: string;
  remote: string;
  mode: number;
}

export interface DirectoryMirror {
  local: string;
  remote: string;
  /** Every regular file of the local tree now. Symbolic links and special files are never synced. */
  entries: readonly TreeEntry[];
  /** Files new or changed since the last successful mirror (every entry when `full`). */
  changed: readonly TreeEntry[];
  /** Relative paths that were mirrored before and are gone locally now. */
  removed: readonly string[];
  /**
   * Nothing is known about the remote side (first sync, after a failure, or
   * forced): the transfer must also delete remote files that are not in
   * `entries`, because `removed` cannot list them.
   */
  full: boolean;
}

/** How a backend moves bytes. Every method throws on failure; FileSync then forgets what it knew. */
export interface SyncTransfer {
  /** `mkdir -p` each path. Called once per path per session (and again after a failure). */
  makeDirectories(paths: readonly string[]): Promise<void>;
  /** Copy each file to its remote path with its mode; the parent directory exists. */
  uploadFiles(files: readonly FileUpload[]): Promise<void>;
  /** Remove remote files; a file that is already gone is not an error. */
  removeFiles(paths: readonly string[]): Promise<void>;
  /** Make `remote` an exact copy of `local` (modes kept, extras deleted); its parent exists. */
  mirrorDirectory(mirror: DirectoryMirror): Promise<void>;
}

export interface SyncReport {
  /** "interval": skipped without looking, inside the interval since the last sync. */
  skipped: "interval" | undefined;
  /** Remote paths of single files uploaded. */
  uploaded: string[];
  /** Remote paths of single files removed (their local file is gone). */
  removed: string[];
  /** Remote roots of the directories that were mirrored (unchanged ones are not listed). */
  mirrored: string[];
  /** Directories created this time. */
  createdDirectories: string[];
}
