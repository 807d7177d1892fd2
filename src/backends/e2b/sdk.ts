/**
 * The subset of the `e2b` SDK this backend calls, written out here so that
 * our published types do not need the optional SDK. The SDK's `Sandbox`
 * satisfies it: loadE2bSdk() in transport.ts assigns its class to
 * E2bSandboxClass, which the compiler checks against the SDK's own types.
 */

/** Where the SDK finds E2B (or an E2B-compatible platform); every field defaults from the SDK's environment variables. */
export interface E2bConnection {
  apiKey?: string;
  domain?: string;
  apiUrl?: string;
  sandboxUrl?: string;
  requestTimeoutMs?: number;
}

export interface E2bCommandHandle {
  readonly pid: number;
  /** Resolves when the command ended with 0; rejects with the SDK's CommandExitError (its `exitCode`) otherwise. */
  wait(): Promise<{ exitCode: number }>;
}

export interface E2bRunOptions {
  background: true;
  /** Keep the command's stdin open for sendStdin. */
  stdin?: boolean;
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
  /** 0: no limit (the SDK's default is 60 s). */
  timeoutMs?: number;
  requestTimeoutMs?: number;
}

export interface E2bCommands {
  run(cmd: string, opts: E2bRunOptions): Promise<E2bCommandHandle>;
  sendStdin(pid: number, data: string): Promise<void>;
  closeStdin(pid: number): Promise<void>;
  kill(pid: number): Promise<boolean>;
}

export interface E2bFiles {
  write(path: string, data: string | ArrayBuffer): Promise<unknown>;
  write(files: { path: string; data: string | ArrayBuffer }[]): Promise<unknown>;
  read(path: string, opts: { format: "bytes" }): Promise<Uint8Array>;
}

export interface E2bSandbox {
  readonly sandboxId: string;
  readonly commands: E2bCommands;
  readonly files: E2bFiles;
  /** `host:port` of a port of the sandbox, as E2B's proxy serves it. */
  getHost(port: number): string;
  isRunning(): Promise<boolean>;
  setTimeout(timeoutMs: number): Promise<void>;
  kill(): Promise<unknown>;
  /** A persistent snapshot of the sandbox now (its files; on E2B its memory too): `create(snapshotId)` starts from it. */
  createSnapshot(): Promise<{ snapshotId: string }>;
  /** `count` new sandboxes from one snapshot of this one now; each entry a started sandbox or why it did not start. */
  fork(opts: { count: number; timeoutMs?: number }): Promise<(E2bSandbox | Error)[]>;
}

export interface E2bCreateOptions extends E2bConnection {
  envs?: Record<string, string>;
  metadata?: Record<string, string>;
  timeoutMs?: number;
}

/** The SDK's `Sandbox` class, as far as this backend calls it. */
export interface E2bSandboxClass {
  create(template: string, opts: E2bCreateOptions): Promise<E2bSandbox>;
  connect(sandboxId: string, opts: E2bConnection & { timeoutMs?: number }): Promise<E2bSandbox>;
  deleteSnapshot(snapshotId: string, opts: E2bConnection): Promise<boolean>;
}
