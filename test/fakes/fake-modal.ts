/**
 * FAKE Modal client for tests: NOT Modal. It has the shapes of the parts of
 * Modal's JavaScript SDK (npm `modal` 0.11) that the modal backend calls —
 * `apps.fromName`, `images.fromRegistry/fromId`, `Image.dockerfileCommands`,
 * `sandboxes.create`, `Sandbox.exec` (binary mode, stdin WritableStream,
 * stdout/stderr ReadableStreams, wait), `Sandbox.terminate`,
 * `Sandbox.filesystem`, `Sandbox.snapshotFilesystem` and `images.delete` —
 * and runs every exec with the real program on this machine. Modal's cloud
 * cannot be reached from here; this is the network boundary. It also
 * enforces Modal's 64 KiB argv cap and records every call.
 *
 * A sandbox's own files: with `{ privateTmp: true }` each sandbox has a /tmp
 * of its own (private-tmp.ts), which `snapshotFilesystem` copies into an
 * image (`im-fake…`) that a sandbox created from it starts with, as Modal
 * starts one from a snapshot's image; without it every fake sandbox shares
 * this machine's files, and a snapshot's image holds none of them.
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
import { PrivateTmp } from "./private-tmp.js";

export class FakeModalImage implements ModalImage {
  constructor(
    readonly tag: string,
    readonly commands: string[] = [],
    /** A snapshot's image: its id, and the sandbox's /tmp as it was (with `privateTmp`). */
    readonly snapshot?: { imageId: string; files: PrivateTmp | undefined },
  ) {}
  get imageId(): string {
    return this.snapshot?.imageId ?? (this.tag.startsWith("im-") ? this.tag : "");
  }
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
  readonly #client: FakeModalClient;
  /** Its own /tmp, with `privateTmp`. */
  readonly files: PrivateTmp | undefined;

  constructor(
    id: number,
    readonly image: FakeModalImage,
    readonly params: ModalSdk.SandboxCreateParams,
    client: FakeModalClient,
  ) {
    this.sandboxId = `sb-fake${id}`;
    this.#env = { ...hostSandboxEnv(), ...params.env };
    this.#client = client;
    if (client.privateTmp) this.files = image.snapshot?.files?.copy() ?? PrivateTmp.fresh();
  }

  /** Modal's filesystem snapshot: an image of the sandbox's files now, registered with the client. */
  async snapshotFilesystem(params?: ModalSdk.SandboxSnapshotFilesystemParams): Promise<FakeModalImage> {
    this.#client.snapshotCalls.push({ sandboxId: this.sandboxId, params });
    this.#checkAlive();
    await this.#client.snapshotHold;
    const injected = this.#client.failSnapshot;
    if (injected) throw injected;
    this.#checkAlive();
    const imageId = `im-fake${++this.#client.imagesMade}`;
    const image = new FakeModalImage(this.image.tag, this.image.commands, { imageId, files: this.files?.copy() });
    this.#client.images.saved.set(imageId, image);
    return image;
  }

  async exec(argv: string[], params: ModalSdk.SandboxExecParams & { mode: "binary" }): Promise<ModalProcess> {
    this.execs.push({ argv, params });
    if (this.terminated) throw new Error(`Sandbox ${this.sandboxId} has already terminated`);
    const injected = this.failExec?.(argv);
    if (injected) throw injected;
    const size = argv.reduce((sum, arg) => sum + Buffer.byteLength(arg) + 1, 0);
    if (size > ARGV_LIMIT) throw new Error(`command arguments are ${size} bytes; the limit is ${ARGV_LIMIT}`);
    const child = this.#processes.spawn(this.files?.argv(argv) ?? argv, {
      env: this.#env,
      cwd: params.workdir,
      timeoutMs: params.timeoutMs,
    });
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
    this.files?.remove();
  }

  /** Where a path of the sandbox lies on this machine. */
  #path(remotePath: string): string {
    return this.files?.hostPath(remotePath) ?? remotePath;
  }

  readonly filesystem: ModalFilesystem & { calls: string[] } = {
    calls: [],
    writeBytes: async (data: Uint8Array | ArrayBuffer | Buffer, remotePath: string) => {
      this.#checkAlive();
      this.filesystem.calls.push(`writeBytes ${remotePath}`);
      mkdirSync(dirname(this.#path(remotePath)), { recursive: true });
      writeFileSync(this.#path(remotePath), data instanceof ArrayBuffer ? new Uint8Array(data) : data);
    },
    readBytes: async (remotePath: string) => {
      this.#checkAlive();
      this.filesystem.calls.push(`readBytes ${remotePath}`);
      return new Uint8Array(readFileSync(this.#path(remotePath)));
    },
    makeDirectory: async (remotePath: string) => {
      this.#checkAlive();
      this.filesystem.calls.push(`makeDirectory ${remotePath}`);
      mkdirSync(this.#path(remotePath), { recursive: true });
    },
    remove: async (remotePath: string, options?: { recursive?: boolean }) => {
      this.#checkAlive();
      this.filesystem.calls.push(`remove ${remotePath}`);
      rmSync(this.#path(remotePath), { recursive: options?.recursive ?? false });
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
  /** Each sandbox has a /tmp of its own, which snapshots copy (private-tmp.ts). */
  readonly privateTmp: boolean;
  /** Every snapshotFilesystem call. */
  readonly snapshotCalls: { sandboxId: string; params: ModalSdk.SandboxSnapshotFilesystemParams | undefined }[] = [];
  /** Set to make snapshotFilesystem fail as the SDK call does (a rejected promise). */
  failSnapshot: Error | undefined;
  /** While set, snapshotFilesystem waits for it before it snapshots (a slow snapshot). */
  snapshotHold: Promise<void> | undefined;
  imagesMade = 0;

  constructor(options: { privateTmp?: boolean } = {}) {
    this.privateTmp = options.privateTmp === true;
  }

  readonly apps = {
    fromName: async (name: string, params?: ModalSdk.AppFromNameParams): Promise<ModalApp> => {
      this.appLookups.push({ name, params });
      return { appId: `ap-fake-${name}` };
    },
  };

  readonly images = {
    /** The snapshots' images not deleted yet, by id. */
    saved: new Map<string, FakeModalImage>(),
    deleted: [] as string[],
    fromRegistry: (tag: string) => new FakeModalImage(tag),
    fromId: async (imageId: string): Promise<FakeModalImage> => {
      const saved = this.images.saved.get(imageId);
      if (saved !== undefined) return saved;
      // As Modal answers for an image that was deleted (or never was).
      if (imageId.startsWith("im-fake")) throw new Error(`Image ${imageId} not found`);
      return new FakeModalImage(imageId);
    },
    delete: async (imageId: string): Promise<void> => {
      const saved = this.images.saved.get(imageId);
      if (saved === undefined) throw new Error(`Could not find image with ID ${imageId}`);
      this.images.saved.delete(imageId);
      this.images.deleted.push(imageId);
      saved.snapshot?.files?.remove();
    },
  };

  readonly sandboxes = {
    create: async (
      _app: ModalApp,
      image: ModalImage,
      params?: ModalSdk.SandboxCreateParams,
    ): Promise<FakeModalSandbox> => {
      if (this.failCreate) throw this.failCreate;
      const sandbox = new FakeModalSandbox(
        this.sandboxesCreated.length + 1,
        image as FakeModalImage,
        params ?? {},
        this,
      );
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
