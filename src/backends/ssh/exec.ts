/** A one-off command on the host over the session's master (`SshTransport.exec`), and what it returns. */

export interface ExecOptions {
  stdin?: string | Buffer | undefined;
  timeoutMs?: number;
}

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}
