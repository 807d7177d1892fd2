export { createEnvironment, BACKENDS } from "./backends/index.js";
export type { BackendName, CommonConfig, Environment, EnvironmentConfig, LocalConfig, SshConfig } from "./backends/index.js";
export type { ApptainerConfig, DaytonaConfig, ModalConfig } from "./backends/index.js";
export type { ModalApi, ModalSandbox } from "./backends/modal.js";
export type { DaytonaApi, DaytonaSandbox } from "./backends/daytona.js";
export { Session } from "./core/session.js";
export type { ExecuteOptions, ExecuteResult, SessionOptions, SessionState } from "./core/session.js";
export type { BackendFiles, KillSignal, ProcessHandle, RunOptions, Transport } from "./core/transport.js";
export {
  BackendUnavailableError,
  InvalidOptionError,
  SessionClosedError,
  SessionNotFoundError,
  ShellwrightError,
  SpawnError,
  SyncError,
  isShellwrightError,
} from "./core/errors.js";
export type { ErrorCode } from "./core/errors.js";
export { FileSync, normalizeSyncConfig } from "./sync/index.js";
export type { DirectoryMirror, FileSyncOptions, FileUpload, SyncConfig, SyncDirectorySpec, SyncFileSpec, SyncReport, SyncTransfer, TreeEntry } from "./sync/index.js";
