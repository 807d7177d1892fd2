/**
 * FAKE Modal client for tests: NOT Modal. It has the shapes of the parts of
 * Modal's JavaScript SDK (npm `modal` 0.11) that the modal backend calls —
 * `apps.fromName`, `images.fromRegistry/fromId`, `Image.dockerfileCommands`,
 * `sandboxes.create`, `Sandbox.exec` (binary mode, stdin WritableStream,
 * stdout/stderr ReadableStreams, wait), `Sandbox.terminate`,
 * `Sandbox.filesystem` — and runs every exec with the real program on this
 * machine. Modal's cloud cannot be reached from here; this is the network
 * boundary. It also enforces Modal's 64 KiB argv cap and records every call.
 */

import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { Readable } from "node:stream";
import type * as ModalSdk from "modal";
import type {
  ModalApi,
  ModalApp,
  ModalFilesystem,
  ModalImage,
  ModalProcess,
  ModalSandbox,
} from "../../src/backends/modal/transport.js";
import { exitCodeOf, hostSandboxEnv, LocalProcessGroup } from "./local-process.js";

export class FakeModalImage implements ModalImage {
  constructor(
    readonly tag: string,
    readonly commands: string[] = [],
  ) {}
  dockerfileCommands(commands: string[]): FakeModalImage {
    return new FakeModalImage(this.tag, [...this.commands, ...commands]);
  }
}

export interface FakeModalExec {
  argv: string[];
  params: ModalSdk.SandboxExecParams;
}

/** Modal rejects an exec whose argv exceeds 64 KiB in all. */
const ARGV_LIMIT = 65_536;

export class FakeModalSandbox implements ModalSandbox {
  readonly sandboxId: string;
  readonly execs: FakeModalExec[] = [];
  /** Writes to any exec's stdin (each is one SDK round trip on Modal). */
  stdinWrites = 0;
  terminated = false;
  terminateCalls = 0;
  /**
   * Delivers every exec's output this much later than the program wrote it, while wait() still reports the exit
   * at once: Modal streams output and reports the exit on separate channels, and nothing orders the two.
   */
  outputDelayMs = 0;
  /** Set to make the next exec calls fail the way an SDK call fails (a rejected promise). */
  failExec: ((argv: string[]) => Error | undefined) | undefined;
  readonly #processes = new LocalProcessGroup();
  readonly #env: Record<string, string>;

  constructor(
    id: number,
    readonly image: FakeModalImage,
    readonly params: ModalSdk.SandboxCreateParams,
  ) {
    this.sandboxId = `sb-fake${id}`;
    this.#env = { ...hostSandboxEnv(), ...params.env };
  }

  async exec(argv: string[], params: ModalSdk.SandboxExecParams & { mode: "binary" }): Promise<ModalProcess> {
    this.execs.push({ argv, params });
    if (this.terminated) throw new Error(`Sandbox ${this.sandboxId} has already terminated`);
    const injected = this.failExec?.(argv);
    if (injected) throw injected;
    const size = argv.reduce((sum, arg) => sum + Buffer.byteLength(arg) + 1, 0);
    if (size > ARGV_LIMIT) throw new Error(`command arguments are ${size} bytes; the limit is ${ARGV_LIMIT}`);
    const child = this.#processes.spawn(argv, { env: this.#env, cwd: params.workdir, timeoutMs: params.timeoutMs });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", reject);
    });
    await spawned;
    const stdinStream = new WritableStream<Uint8Array>({
      write: (chunk) => new Promise<void>((resolve) => child.stdin!.write(chunk, () => resolve())),
      close: () => new Promise<void>((resolve) => child.stdin!.end(() => resolve())),
    });
    const stdin = Object.assign(stdinStream, {
      async writeText(text: string) {
        const writer = stdinStream.getWriter();
        try {
          await writer.write(Buffer.from(text));
        } finally {
          writer.releaseLock();
        }
      },
      writeBytes: async (bytes: Uint8Array) => {
        this.stdinWrites++;
        const writer = stdinStream.getWriter();
        try {
          await writer.write(bytes);
        } finally {
          writer.releaseLock();
        }
      },
    });
    return {
      stdin,
      stdout: readStream(child.stdout!, this.outputDelayMs),
      stderr: readStream(child.stderr!, this.outputDelayMs),
      wait: () => exitCodeOf(child),
    };
  }

  /** Each port declared at creation, as a URL on this machine (where the fake runs its commands), not a Modal tunnel. */
  async tunnels(): Promise<Record<number, { url: string }>> {
    return Object.fromEntries(
      (this.params.encryptedPorts ?? []).map((port) => [port, { url: `http://127.0.0.1:${port}` }]),
    );
  }

  async poll(): Promise<number | null> {
    return this.terminated ? 137 : null;
  }

  async terminate(): Promise<void> {
    this.terminateCalls++;
    this.terminated = true;
    this.#processes.killAll();
  }

  readonly filesystem: ModalFilesystem & { calls: string[] } = {
    calls: [],
    writeBytes: async (data: Uint8Array | ArrayBuffer | Buffer, remotePath: string) => {
      this.#checkAlive();
      this.filesystem.calls.push(`writeBytes ${remotePath}`);
      mkdirSync(dirname(remotePath), { recursive: true });
      writeFileSync(remotePath, data instanceof ArrayBuffer ? new Uint8Array(data) : data);
    },
    readBytes: async (remotePath: string) => {
      this.#checkAlive();
      this.filesystem.calls.push(`readBytes ${remotePath}`);
      return new Uint8Array(readFileSync(remotePath));
    },
    makeDirectory: async (remotePath: string) => {
      this.#checkAlive();
      this.filesystem.calls.push(`makeDirectory ${remotePath}`);
      mkdirSync(remotePath, { recursive: true });
    },
    remove: async (remotePath: string, options?: { recursive?: boolean }) => {
      this.#checkAlive();
      this.filesystem.calls.push(`remove ${remotePath}`);
      rmSync(remotePath, { recursive: options?.recursive ?? false });
    },
  };

  #checkAlive(): void {
    if (this.terminated) throw new Error(`Sandbox ${this.sandboxId} has already terminated`);
  }
}

function readStream(stream: Readable, delayMs: number): ModalSdk.ModalReadStream<Uint8Array> {
  let web = Readable.toWeb(stream) as unknown as ReadableStream<Uint8Array>;
  if (delayMs > 0)
    web = web.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, controller) =>
          new Promise<void>((resolve) => setTimeout(resolve, delayMs)).then(() => controller.enqueue(chunk)),
      }),
    );
  return Object.assign(web, {
    async readBytes() {
      const chunks: Uint8Array[] = [];
      const reader = web.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          chunks.push(value);
        }
      } finally {
        reader.releaseLock();
      }
      return new Uint8Array(Buffer.concat(chunks));
    },
    async readText() {
      return Buffer.from(await this.readBytes()).toString("utf8");
    },
  });
}

/** The fake client: what `new ModalClient()` would be, minus the cloud. */
export class FakeModalClient implements ModalApi {
  readonly sandboxesCreated: FakeModalSandbox[] = [];
  readonly appLookups: { name: string; params: ModalSdk.AppFromNameParams | undefined }[] = [];
  /** Set to make sandbox creation fail. */
  failCreate: Error | undefined;

  readonly apps = {
    fromName: async (name: string, params?: ModalSdk.AppFromNameParams): Promise<ModalApp> => {
      this.appLookups.push({ name, params });
      return { appId: `ap-fake-${name}` };
    },
  };

  readonly images = {
    fromRegistry: (tag: string) => new FakeModalImage(tag),
    fromId: async (imageId: string) => new FakeModalImage(imageId),
  };

  readonly sandboxes = {
    create: async (
      _app: ModalApp,
      image: ModalImage,
      params?: ModalSdk.SandboxCreateParams,
    ): Promise<FakeModalSandbox> => {
      if (this.failCreate) throw this.failCreate;
      const sandbox = new FakeModalSandbox(this.sandboxesCreated.length + 1, image as FakeModalImage, params ?? {});
      this.sandboxesCreated.push(sandbox);
      return sandbox;
    },
  };

  get last(): FakeModalSandbox {
    const sandbox = this.sandboxesCreated.at(-1);
    if (!sandbox) throw new Error("no sandbox was created");
    return sandbox;
  }
}
