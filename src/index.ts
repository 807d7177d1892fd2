export { createEnvironment, BACKENDS } from "./backends/index.js";
export type { BackendName, CommonConfig, DockerConfig, Environment, EnvironmentConfig, LocalConfig } from "./backends/index.js";
export type { DockerCall } from "./backends/docker/engine.js";
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
  isShellwrightError,
} from "./core/errors.js";
export type { ErrorCode } from "./core/errors.js";
