/**
 * The Modal backend, over Modal's own JavaScript SDK (npm `modal`, 0.11 line):
 * one sandbox created at open, each command a `sandbox.exec(["bash", "-c",
 * …])` in binary mode with its output streamed as it arrives (the wrapper
 * merges stderr into stdout, so the order is kept) and its stdin written
 * byte-exact to the exec's stdin stream.
 *
 * A timeout or interrupt kills the command's process tree inside the sandbox
 * (an exec of the kill script on the PID the wrapper reported). Only when that
 * fails is the sandbox terminated, and the next command then creates a new one.
 */

import { randomBytes } from "node:crypto";
import type { PortUrl } from "../../core/environment.js";
import { modalTunnelUrl } from "./tunnels.js";
import type * as ModalSdk from "modal";
import { BackendUnavailableError } from "../../core/errors.js";
import { shellQuote } from "../../core/script.js";
import type { ProcessHandle, RunOptions } from "../../core/transport.js";
import { bashLaunch } from "../shared/launch.js";
import { messageOf } from "../shared/error-message.js";
import { CallCancel } from "../shared/call-cancel.js";
import { sdkProcessHandle, type OutputSink } from "../shared/sdk-handle.js";
import type { SandboxWrite } from "../shared/sdk-sync.js";
import { SdkTransport } from "../shared/sdk-transport.js";
import { modalBox, runInSandbox } from "./box.js";
import type { NormalizedSyncConfig } from "../../sync/options.js";

import type {
  ModalApi,
  ModalExecParams,
  ModalFilesystem,
  ModalProcess,
  ModalSandbox,
  ModalSandboxParams,
} from "./sdk.js";

export type {
  ModalApi,
  ModalApp,
  ModalExecParams,
  ModalFilesystem,
  ModalImage,
  ModalProcess,
  ModalReadable,
  ModalSandbox,
  ModalSandboxParams,
  ModalWritable,
} from "./sdk.js";

export interface ModalTransportOptions {
  /** A registry image (`debian:bookworm-slim`) or a Modal image id (`im-…`). */
  image: string;
  /** Add Python to the image: "auto" does it for ubuntu/debian registry images. */
  addPython: boolean | "auto";
  appName: string;
  cpu?: number | undefined;
  memoryMiB?: number | undefined;
  /** The sandbox's maximum lifetime. */
  lifetimeMs: number;
  idleTimeoutMs?: number | undefined;
  /** The sandbox's environment: set at creation, never on a command line. */
  env: Record<string, string>;
  /** Modal's client, or a fake with the same shape; default: `new ModalClient()` from the `modal` package. */
  client?: ModalApi | undefined;
  /** Run calls through the fast-path helper (docs/fast-path.md); false: one exec per call. */
  fastPath?: boolean | undefined;
  /** Extra time the server-side exec timeout gives the session's own deadline. */
  execTimeoutMarginMs: number;
  /** Files and directories mirrored into the sandbox before commands, through its filesystem API. */
  sync?: NormalizedSyncConfig | undefined;
  /** Ports tunnelled to the outside, declared at creation. */
  ports?: number[] | undefined;
  warn: (message: string) => void;
}

/** Modal caps an exec's argv at 64 KiB in all: longer scripts travel on stdin. */
const MAX_INLINE_SCRIPT = 60_000;
const CONTROL_TIMEOUT_MS = 20_000;
/** How long Modal may take to snapshot a sandbox's filesystem. */
const SNAPSHOT_TIMEOUT_MS = 300_000;
/** A checkpoint's image outlives a process that dies holding it by a day at most: Modal deletes it then. */
const SNAPSHOT_TTL_MS = 24 * 3_600_000;

/** The image as Modal should build it. */
export type ModalImageSpec =
  { kind: "id"; imageId: string } | { kind: "registry"; tag: string; dockerfileCommands: string[] };

/** Python for ubuntu/debian images, which ship without it (`add_python` in Modal's Python SDK). */
export const ADD_PYTHON_COMMANDS = [
  "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv python3-pip && rm -rf /var/lib/apt/lists/*",
];

export function resolveModalImage(image: string, addPython: boolean | "auto"): ModalImageSpec {
  if (/^im-[A-Za-z0-9]+$/.test(image)) return { kind: "id", imageId: image };
  const name = image.split("@")[0]!.toLowerCase();
  const wantsPython = addPython === "auto" ? /(^|[/:_-])(ubuntu|debian)([:_.-]|$)/.test(name) : addPython;
  return { kind: "registry", tag: image, dockerfileCommands: wantsPython ? [...ADD_PYTHON_COMMANDS] : [] };
}

export class ModalTransport extends SdkTransport<ModalSandbox> {
  readonly #options: ModalTransportOptions;
  #client: ModalApi | undefined;
  #starting: Promise<ModalSandbox> | undefined;

  constructor(options: ModalTransportOptions) {
    super("modal", "Modal", options);
    this.#options = options;
    if (options.fastPath !== false)
      this.enableFastPath(
        modalBox(() => this.runningSandbox()),
        () => this.sandbox?.sandboxId,
        "the Modal sandbox",
      );
  }

  /** The current sandbox's id (undefined before start or after a terminate). */
  get sandboxId(): string | undefined {
    return this.sandbox?.sandboxId;
  }

  get boxId(): string | undefined {
    return this.sandbox?.sandboxId;
  }

  /** An image of the running sandbox's whole filesystem (a checkpoint, a fork); its id. */
  async snapshotFilesystem(): Promise<string> {
    const image = await this.runningSandbox().snapshotFilesystem({
      timeoutMs: SNAPSHOT_TIMEOUT_MS,
      ttlMs: SNAPSHOT_TTL_MS,
    });
    return image.imageId;
  }

  async deleteImage(imageId: string): Promise<void> {
    const client = (this.#client ??= this.#options.client ?? (await loadModalClient()));
    await client.images.delete(imageId);
  }

  /** A new sandbox of the session's config started from an image (a rollback's): not yet the session's. */
  async sandboxFromImage(imageId: string): Promise<ModalSandbox> {
    if (this.closed) throw new BackendUnavailableError("The Modal backend was stopped", { backend: this.name });
    return this.#newSandbox({ kind: "id", imageId });
  }

  /** Writes a private file into a sandbox that is not the session's yet, through its stdin. */
  async writeFileIn(sandbox: ModalSandbox, path: string, bytes: Uint8Array): Promise<void> {
    const [target, temp] = [shellQuote(path), shellQuote(`${path}.restore-${randomBytes(6).toString("hex")}`)];
    const script = `umask 077; mkdir -p -- "$(dirname -- ${target})" && cat > ${temp} && mv -f -- ${temp} ${target}`;
    const result = await withDeadline(
      runInSandbox(sandbox, ["bash", "-c", script], bytes, CONTROL_TIMEOUT_MS),
      CONTROL_TIMEOUT_MS,
      "a write into the new Modal sandbox",
    );
    if (result.exitCode !== 0) throw new Error(`the write exited ${result.exitCode}: ${result.output.trim()}`);
  }

  async discard(sandbox: ModalSandbox): Promise<void> {
    await sandbox.terminate();
  }

  override async start(): Promise<void> {
    await this.#ensureSandbox();
  }

  /** Brings a sandbox back if the last resort terminated the previous one, then syncs files. */
  async beforeExecute(): Promise<void> {
    const sandbox = await this.#ensureSandbox();
    if (!(await this.syncQuietly()) && (await this.#ended(sandbox))) {
      // The sandbox ended under us: replace it and sync into the new one.
      if (this.sandbox === sandbox) this.sandbox = undefined;
      await this.#ensureSandbox();
      await this.syncQuietly();
    }
  }

  override runBash(script: string, options: RunOptions): ProcessHandle {
    let sandbox = this.sandbox;
    const marks = this.newCallMarks();
    const cancel = new CallCancel(
      () => this.killByMark(marks),
      // The last resort: terminate the sandbox; the next command gets a new one.
      () => this.#terminate(sandbox),
    );
    const handle = sdkProcessHandle({
      backend: this.name,
      separateStreams: options.separateStreams,
      run: async (sink, errors) => {
        const launch = bashLaunch(script, options, MAX_INLINE_SCRIPT, marks);
        const params: ModalExecParams = { mode: "binary", stdout: "pipe", stderr: "pipe" };
        // A server-side backstop for when this process dies; the session's own
        // deadline fires first. Past the sandbox's lifetime it would mean nothing.
        if (options.timeoutMs !== undefined)
          params.timeoutMs = Math.ceil(
            Math.min(options.timeoutMs + this.#options.execTimeoutMarginMs, this.#options.lifetimeMs),
          );
        let process: ModalProcess;
        try {
          if (sandbox === undefined)
            throw new BackendUnavailableError("The Modal sandbox is not running", { backend: this.name });
          process = await sandbox.exec(launch.argv, params);
        } catch (error) {
          // A sandbox that ended (its lifetime ran out, or it was terminated
          // elsewhere) is replaced, and the command, which never started, runs there.
          if (sandbox !== undefined && !(await this.#ended(sandbox))) throw error;
          if (this.sandbox === sandbox) this.sandbox = undefined;
          sandbox = await this.#ensureSandbox();
          await this.syncQuietly();
          cancel.beforeStart();
          process = await sandbox.exec(launch.argv, params);
        }
        void cancel.started();
        const input = (async () => {
          if (launch.stdin !== undefined) await process.stdin.writeBytes(launch.stdin);
          await process.stdin.close();
        })();
        input.catch(() => undefined); // a command may exit without reading its stdin
        if (errors === sink) pumpStreams([process.stdout, process.stderr], sink);
        else {
          pumpStreams([process.stdout], sink);
          pumpStreams([process.stderr], errors);
        }
        return process.wait().finally(() => cancel.ended());
      },
      cancel: () => cancel.cancel(),
    });
    return this.guard(handle, marks);
  }

  /** The sandbox's tunnel for `port`, which must have been declared (`ports`) when it was created. */
  async portUrl(port: number): Promise<PortUrl> {
    return modalTunnelUrl(port, this.#options.ports ?? [], await this.#ensureSandbox());
  }

  protected override async writeFiles(sandbox: ModalSandbox, files: readonly SandboxWrite[]): Promise<void> {
    for (const file of files) await sandbox.filesystem.writeBytes(file.bytes, file.remote);
  }

  protected override async release(sandbox: ModalSandbox): Promise<void> {
    await sandbox.terminate();
  }

  protected override describeRelease(sandbox: ModalSandbox): string {
    return `terminate Modal sandbox ${sandbox.sandboxId}`;
  }

  /** The filesystem of the current sandbox, for file sync. */
  get filesystem(): ModalFilesystem | undefined {
    return this.sandbox?.filesystem;
  }

  async #ensureSandbox(): Promise<ModalSandbox> {
    if (this.closed) throw new BackendUnavailableError("The Modal backend was stopped", { backend: this.name });
    if (this.sandbox !== undefined) return this.sandbox;
    this.#starting ??= this.#create().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  async #create(): Promise<ModalSandbox> {
    this.sandbox = await this.#newSandbox(resolveModalImage(this.#options.image, this.#options.addPython));
    this.fileSync?.invalidate(); // a new sandbox has none of the synced files
    return this.sandbox;
  }

  async #newSandbox(spec: ModalImageSpec): Promise<ModalSandbox> {
    const options = this.#options;
    try {
      const client = (this.#client ??= options.client ?? (await loadModalClient()));
      const app = await client.apps.fromName(options.appName, { createIfMissing: true });
      let image = spec.kind === "id" ? await client.images.fromId(spec.imageId) : client.images.fromRegistry(spec.tag);
      if (spec.kind === "registry" && spec.dockerfileCommands.length > 0)
        image = image.dockerfileCommands(spec.dockerfileCommands);
      const params: ModalSandboxParams = { timeoutMs: options.lifetimeMs, tags: { "created-by": "shellwright" } };
      if (options.cpu !== undefined) params.cpu = options.cpu;
      if (options.memoryMiB !== undefined) params.memoryMiB = options.memoryMiB;
      if (options.idleTimeoutMs !== undefined) params.idleTimeoutMs = options.idleTimeoutMs;
      if (Object.keys(options.env).length > 0) params.env = { ...options.env };
      if (options.ports !== undefined && options.ports.length > 0) params.encryptedPorts = [...options.ports];
      return await client.sandboxes.create(app, image, params);
    } catch (error) {
      if (error instanceof BackendUnavailableError) throw error;
      const from = spec.kind === "id" ? spec.imageId : spec.tag;
      throw new BackendUnavailableError(`Could not create a Modal sandbox from ${from}: ${messageOf(error)}`, {
        cause: error,
        backend: this.name,
      });
    }
  }

  async #ended(sandbox: ModalSandbox): Promise<boolean> {
    try {
      return (await sandbox.poll()) !== null;
    } catch {
      return true;
    }
  }

  /** The last resort: the whole sandbox goes, and the next command gets a new one. */
  async #terminate(sandbox: ModalSandbox | undefined): Promise<void> {
    if (sandbox === undefined) return;
    if (this.sandbox === sandbox) this.sandbox = undefined;
    await sandbox.terminate();
  }

  protected override async control(script: string): Promise<{ exitCode: number; output: string }> {
    const sandbox = this.runningSandbox();
    const launch = bashLaunch(script, { cleanEnv: false }, MAX_INLINE_SCRIPT);
    return withDeadline(
      runInSandbox(sandbox, launch.argv, launch.stdin, CONTROL_TIMEOUT_MS),
      CONTROL_TIMEOUT_MS,
      "a control exec in the Modal sandbox",
    );
  }
}

/** Copies the exec's streams into the sink as they arrive; the sink ends when both have. */
function pumpStreams(streams: ReadableStream<Uint8Array>[], sink: OutputSink): void {
  let open = streams.length;
  for (const stream of streams) {
    void (async () => {
      const reader = stream.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          if (value !== undefined) sink.push(value);
        }
      } catch {
        // a broken stream ends the output; the exit code still decides
      } finally {
        reader.releaseLock();
        if (--open === 0) sink.end();
      }
    })();
  }
}

async function loadModalClient(): Promise<ModalApi> {
  let sdk: typeof ModalSdk;
  try {
    sdk = await import("modal");
  } catch (error) {
    throw new BackendUnavailableError(
      `The modal backend needs Modal's JavaScript SDK, which is not installed: run \`npm install modal@~0.11\` (${messageOf(error)})`,
      { cause: error, backend: "modal" },
    );
  }
  // Credentials come from MODAL_TOKEN_ID / MODAL_TOKEN_SECRET or ~/.modal.toml, as Modal's own tools read them.
  return new sdk.ModalClient();
}

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
