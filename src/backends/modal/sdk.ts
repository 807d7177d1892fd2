/**
 * The subset of Modal's SDK this backend calls, written out here so that our
 * published types do not need the optional `modal` package. A real
 * `ModalClient` satisfies it: loadModalClient() in transport.ts assigns one
 * to it, which the compiler checks against the SDK's own type definitions.
 * Tests pass a fake with the same shapes that runs commands on this machine.
 */

export interface ModalApp {
  readonly appId: string;
}
export interface ModalImage {
  /** Set once the image exists on Modal (a snapshot's image has one at once). */
  readonly imageId: string;
  dockerfileCommands(commands: string[]): ModalImage;
}
export interface ModalReadable extends ReadableStream<Uint8Array> {
  readBytes(): Promise<Uint8Array>;
}
export interface ModalWritable extends WritableStream<Uint8Array> {
  writeBytes(bytes: Uint8Array): Promise<void>;
}
export interface ModalProcess {
  readonly stdin: ModalWritable;
  readonly stdout: ModalReadable;
  readonly stderr: ModalReadable;
  wait(): Promise<number>;
}
export interface ModalFilesystem {
  writeBytes(data: Uint8Array, remotePath: string): Promise<void>;
  readBytes(remotePath: string): Promise<Uint8Array>;
  makeDirectory(remotePath: string, options?: { createParents?: boolean }): Promise<void>;
  remove(remotePath: string, options?: { recursive?: boolean }): Promise<void>;
}
export interface ModalExecParams {
  mode: "binary";
  stdout?: "pipe" | "ignore";
  stderr?: "pipe" | "ignore";
  workdir?: string;
  timeoutMs?: number;
  env?: Record<string, string>;
}
export interface ModalSandboxParams {
  cpu?: number;
  memoryMiB?: number;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  env?: Record<string, string>;
  tags?: Record<string, string>;
  /** Ports reachable from outside through an HTTPS tunnel. */
  encryptedPorts?: number[];
}
export interface ModalSandbox {
  readonly sandboxId: string;
  readonly filesystem: ModalFilesystem;
  exec(command: string[], params: ModalExecParams): Promise<ModalProcess>;
  terminate(): Promise<unknown>;
  /** null while the sandbox runs, else its exit code. */
  poll(): Promise<number | null>;
  /**
   * An image of the sandbox's whole filesystem now, which a new sandbox can start from; Modal keeps it for
   * `ttlMs` (a multiple of 1000; default 30 days).
   */
  snapshotFilesystem(params?: { timeoutMs?: number; ttlMs?: number | null }): Promise<ModalImage>;
  /** The public tunnels of the ports declared at creation (`encryptedPorts`), by container port. */
  tunnels?(timeoutMs?: number): Promise<Record<number, { url: string }>>;
}
export interface ModalApi {
  readonly apps: {
    fromName(name: string, params?: { createIfMissing?: boolean; environment?: string }): Promise<ModalApp>;
  };
  readonly images: {
    fromRegistry(tag: string): ModalImage;
    fromId(imageId: string): Promise<ModalImage>;
    /** Deletes an image (a released checkpoint's snapshot). */
    delete(imageId: string): Promise<void>;
  };
  readonly sandboxes: { create(app: ModalApp, image: ModalImage, params?: ModalSandboxParams): Promise<ModalSandbox> };
}
