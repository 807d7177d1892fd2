export { DEFAULT_SYNC_INTERVAL_MS, FileSync } from "./file-sync.js";
export type { FileSyncOptions, SyncCallOptions } from "./file-sync.js";
export { normalizeSyncConfig } from "./options.js";
export type { NormalizedSyncConfig, SyncConfig } from "./options.js";
export { stampFile, walkTree } from "./fingerprint.js";
export type { FileStamp } from "./fingerprint.js";
export type {
  DirectoryMirror,
  FileUpload,
  SyncDirectorySpec,
  SyncFileSpec,
  SyncReport,
  SyncTransfer,
  TreeEntry,
} from "./types.js";
