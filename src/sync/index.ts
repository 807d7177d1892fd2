export { DEFAULT_SYNC_INTERVAL_MS, FileSync } from "./file-sync.js";
export type { FileSyncOptions, SyncCallOptions } from "./file-sync.js";
export { normalizeSyncConfig } from "./options.js";
export type { NormalizedSyncConfig, SyncConfig } from "./options.js";
export { stampFile, walkTree } from "./fingerprint.js";
export type { FileStamp } from "./fingerprint.js";
// All of types.ts: the seam between FileSync and a backend's transfer.
export type * from "./types.js";
