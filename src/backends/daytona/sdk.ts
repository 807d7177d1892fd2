/**
 * The subset of `@daytonaio/sdk` this backend calls, written out here so that
 * our published types do not need the optional SDK. The real `Daytona`
 * client satisfies it: loadDaytonaClient() in transport.ts assigns one to it,
 * which the compiler checks against the SDK's type definitions. Tests pass a
 * fake with the same shapes.
 */

export interface DaytonaProcess {
  executeCommand(
    command: string,
    cwd?: string,
    env?: Record<string, string>,
    timeout?: number,
  ): Promise<{ exitCode: number; result: string }>;
  createSession(sessionId: string): Promise<void>;
  deleteSession(sessionId: string): Promise<void>;
  executeSessionCommand(
    sessionId: string,
    req: { command: string; runAsync?: boolean },
    timeout?: number,
  ): Promise<{ cmdId: string }>;
  getSessionCommand(sessionId: string, commandId: string): Promise<{ exitCode?: number }>;
  getSessionCommandLogs(
    sessionId: string,
    commandId: string,
    onStdout: (chunk: string) => void,
    onStderr: (chunk: string) => void,
  ): Promise<void>;
  /** Writes to a running session command's stdin (the fast path's requests). */
  sendSessionCommandInput(sessionId: string, commandId: string, data: string): Promise<void>;
}
export interface DaytonaFileSystem {
  uploadFile(file: Buffer, remotePath: string, timeout?: number): Promise<void>;
  uploadFiles(files: { source: string | Buffer; destination: string }[], timeout?: number): Promise<void>;
  createFolder(path: string, mode: string): Promise<void>;
  deleteFile(path: string, recursive?: boolean): Promise<void>;
  setFilePermissions(path: string, permissions: { mode?: string; owner?: string; group?: string }): Promise<void>;
  downloadFile(remotePath: string, timeout?: number): Promise<Buffer>;
}
export interface DaytonaCreateParams {
  name?: string;
  labels?: Record<string, string>;
  envVars?: Record<string, string>;
  autoStopInterval?: number;
  image?: string;
  snapshot?: string;
  resources?: { cpu?: number; memory?: number; disk?: number };
}
export interface DaytonaSandbox {
  readonly id: string;
  readonly name: string;
  readonly state?: string | undefined;
  readonly process: DaytonaProcess;
  readonly fs: DaytonaFileSystem;
  refreshData(): Promise<void>;
  start(timeout?: number): Promise<void>;
  stop(timeout?: number): Promise<void>;
  delete(timeout?: number): Promise<void>;
  /** Saves the sandbox's filesystem as a Daytona snapshot under `name`, which new sandboxes can start from. */
  createSnapshot(name: string, timeout?: number): Promise<void>;
  /** A new sandbox with a copy-on-write clone of this one's filesystem, started. */
  fork(params?: { name?: string }, timeout?: number): Promise<DaytonaSandbox>;
  /** The preview URL of a port, and the token a private sandbox's URL wants in `x-daytona-preview-token`. */
  getPreviewLink?(port: number): Promise<{ url: string; token: string }>;
}
export interface DaytonaApi {
  create(params?: DaytonaCreateParams, options?: { timeout?: number }): Promise<DaytonaSandbox>;
  get(sandboxIdOrName: string): Promise<DaytonaSandbox>;
  list(query?: { labels?: Record<string, string>; limit?: number }): AsyncIterable<DaytonaSandbox>;
  /** Daytona's snapshots (the images sandboxes start from): a released checkpoint's is deleted by name. */
  readonly snapshot: { delete(snapshot: string): Promise<void> };
}
