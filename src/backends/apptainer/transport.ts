/**
 * The Apptainer (Singularity) backend: one instance started at open
 * (`apptainer instance start`), each command an `apptainer exec
 * instance://NAME bash -c …` in it, with the process's natural cwd (no forced
 * `--pwd`). A timeout or interrupt kills the process tree inside the instance.
 */

import type { PortUrl } from "../../core/environment.js";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants as fsConstants, mkdirSync } from "node:fs";
import { constants as osConstants, tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { withoutCredentials } from "../../core/credentials.js";
import { BackendUnavailableError, SpawnError } from "../../core/errors.js";
import { MAX_INLINE_SCRIPT_BYTES, type ProcessHandle, type RunOptions } from "../../core/transport.js";
import { bashLaunch } from "../shared/launch.js";
import { BoxTransport } from "../shared/box-transport.js";
import { ChunkQueue } from "../shared/sdk-handle.js";
import { apptainerBox } from "./box.js";

export interface ApptainerTransportOptions {
  /** `docker://…`, a `.sif` path, or anything else `instance start` accepts. */
  image: string;
  /** `apptainer`, `singularity` or a path; default: whichever is on PATH, apptainer first. */
  executable?: string | undefined;
  /** `--bind` specs, `host[:container[:ro|rw]]`. */
  binds: string[];
  /** A persistent overlay (directory or image); without it the instance gets `--writable-tmpfs`. */
  overlay?: string | undefined;
  /** Mounted as the container's home (`--home`); without it `--no-home`. */
  homeDir?: string | undefined;
  /** `--cpus`. */
  cpus?: number | undefined;
  /** `--memory <N>M`. */
  memoryMiB?: number | undefined;
  /** Holds the image cache and Apptainer's temp files. */
  scratchDir: string;
  /** `APPTAINER_CACHEDIR`; default `<scratchDir>/cache`. */
  cacheDir?: string | undefined;
  /** Variables for the session's first shell, passed as APPTAINERENV_* (never on a command line). */
  env: Record<string, string>;
  startTimeoutMs: number;
  /** Run calls through the fast-path helper (docs/fast-path.md); false: one `apptainer exec` per call. */
  fastPath?: boolean | undefined;
}

const CONTROL_TIMEOUT_MS = 30_000;

interface ApptainerHandle extends ProcessHandle {
  readonly pid: number | undefined;
}

export class ApptainerTransport extends BoxTransport {
  readonly #options: ApptainerTransportOptions;
  readonly #instance = `shellwright_${randomBytes(6).toString("hex")}`;
  #executable = "";
  #started = false;

  constructor(options: ApptainerTransportOptions) {
    super("apptainer");
    this.#options = options;
  }

  /** The instance name (`shellwright_<12 hex>`). */
  get instance(): string {
    return this.#instance;
  }

  override async start(): Promise<void> {
    const options = this.#options;
    this.#executable = findExecutable(options.executable);
    mkdirSync(options.scratchDir, { recursive: true, mode: 0o700 });
    mkdirSync(this.#cacheDir(), { recursive: true, mode: 0o700 });
    const version = await this.#runClient(["version"], 10_000);
    if (version.exitCode !== 0) {
      throw new BackendUnavailableError(
        `\`${this.#executable} version\` failed (exit ${version.exitCode}): ${version.output.trim()}`,
        { backend: this.name },
      );
    }
    const args = ["instance", "start", "--containall"];
    args.push(...(options.homeDir === undefined ? ["--no-home"] : ["--home", options.homeDir]));
    if (options.overlay !== undefined) {
      mkdirSync(options.overlay, { recursive: true, mode: 0o700 });
      args.push("--overlay", options.overlay);
    } else {
      args.push("--writable-tmpfs");
    }
    for (const bind of options.binds) args.push("--bind", bind);
    if (options.memoryMiB !== undefined) args.push("--memory", `${options.memoryMiB}M`);
    if (options.cpus !== undefined) args.push("--cpus", String(options.cpus));
    args.push(options.image, this.#instance);
    const started = await this.#runClient(args, options.startTimeoutMs);
    if (started.exitCode !== 0) {
      throw new BackendUnavailableError(
        `Could not start the Apptainer instance from ${options.image} (exit ${started.exitCode}): ${started.output.trim().slice(0, 2000)}`,
        { backend: this.name },
      );
    }
    this.#started = true;
    if (options.fastPath !== false)
      this.enableFastPath(
        apptainerBox(() => ({ executable: this.#executable, instance: this.#instance, env: this.#clientEnv(false) })),
        () => (this.#started ? this.#instance : undefined),
        "the Apptainer instance",
      );
  }

  override runBash(script: string, options: RunOptions): ApptainerHandle {
    if (!this.#started)
      throw new BackendUnavailableError(
        "The Apptainer instance is not running (start() was not called or it was stopped)",
        { backend: this.name },
      );
    const marks = this.newCallMarks();
    const launch = bashLaunch(script, options, MAX_INLINE_SCRIPT_BYTES, marks);
    const args = ["exec", "--cleanenv", `instance://${this.#instance}`, ...launch.argv];
    const child = spawn(this.#executable, args, {
      stdio: [launch.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      env: this.#clientEnv(!options.cleanEnv),
    });
    const queue = new ChunkQueue();
    // stderr apart: the command's, and the client's own (an Apptainer error), on a queue of their own.
    const errors = options.separateStreams === true ? new ChunkQueue() : undefined;
    // The wrapper merges the command's stderr into stdout; the client's own
    // stderr (an Apptainer error) joins the same stream so it is not lost.
    // Its stderr is held back until stdout has spoken, so a client warning
    // cannot land before the PID line the session looks for first.
    let open = 2;
    let held: Buffer[] | undefined = [];
    const release = (): void => {
      for (const chunk of held ?? []) queue.push(chunk);
      held = undefined;
    };
    const streams = [child.stdout!, child.stderr!];
    const closed = (): void => {
      if (--open > 0) return;
      release();
      queue.end();
    };
    child.stdout!.on("data", (chunk: Buffer) => {
      queue.push(chunk);
      release();
    });
    child.stdout!.on("close", () => {
      release();
      closed();
    });
    if (errors !== undefined) {
      child.stderr!.on("data", (chunk: Buffer) => errors.push(chunk));
      child.stderr!.on("close", () => (errors.end(), closed()));
    } else {
      child.stderr!.on("data", (chunk: Buffer) => (held ? held.push(chunk) : queue.push(chunk)));
      child.stderr!.on("close", closed);
    }
    if (launch.stdin !== undefined && child.stdin) {
      child.stdin.on("error", () => undefined);
      child.stdin.end(launch.stdin);
    }
    const exited = new Promise<number>((resolve, reject) => {
      child.once("error", (error) => {
        reject(
          new SpawnError(`Could not run ${this.#executable}: ${error.message}`, { cause: error, backend: this.name }),
        );
      });
      child.once("exit", (code, signal) => {
        // A backgrounded child may hold the pipes for hours: let it, without keeping Node alive.
        for (const stream of streams) (stream as unknown as { unref?: () => void }).unref?.();
        resolve(code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0));
      });
    });
    return this.guard(
      {
        pid: child.pid,
        output: queue,
        ...(errors === undefined ? {} : { stderr: errors }),
        wait: () => exited,
        kill: () => {
          try {
            child.kill("SIGKILL");
          } catch {
            // already gone
          }
        },
      },
      marks,
    );
  }

  /** An instance shares this machine's network (no `--net`): a server in it listens on our loopback. */
  portUrl(port: number): Promise<PortUrl> {
    return Promise.resolve({ url: `http://localhost:${port}`, headers: {} });
  }

  override async stop(): Promise<void> {
    if (!this.#started) return;
    await this.killSession();
    this.#started = false;
    const stopped = await this.#runClient(["instance", "stop", this.#instance], CONTROL_TIMEOUT_MS);
    if (stopped.exitCode !== 0) {
      throw new BackendUnavailableError(
        `Could not stop Apptainer instance ${this.#instance} (exit ${stopped.exitCode}): ${stopped.output.trim()}`,
        {
          backend: this.name,
        },
      );
    }
  }

  #cacheDir(): string {
    return this.#options.cacheDir ?? join(this.#options.scratchDir, "cache");
  }

  /** The client's environment: cache and temp dirs, and the forwarded variables as APPTAINERENV_*. */
  #clientEnv(forward: boolean): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      // apptainer hands its own environment to the container: no Shellwright tokens in it.
      ...withoutCredentials(process.env),
      APPTAINER_CACHEDIR: this.#cacheDir(),
      APPTAINER_TMPDIR: this.#options.scratchDir,
      SINGULARITY_CACHEDIR: this.#cacheDir(),
      SINGULARITY_TMPDIR: this.#options.scratchDir,
    };
    if (forward) {
      for (const [name, value] of Object.entries(this.#options.env)) {
        env[`APPTAINERENV_${name}`] = value;
        env[`SINGULARITYENV_${name}`] = value;
      }
    }
    return env;
  }

  /** A control script in the instance (the kill script). */
  protected override control(script: string): Promise<{ exitCode: number; output: string }> {
    return this.#runClient(
      ["exec", "--cleanenv", `instance://${this.#instance}`, "bash", "-c", script],
      CONTROL_TIMEOUT_MS,
    );
  }

  /** Runs the client to completion (with a deadline) and returns its merged output. */
  #runClient(args: string[], timeoutMs: number): Promise<{ exitCode: number; output: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.#executable, args, { stdio: ["ignore", "pipe", "pipe"], env: this.#clientEnv(false) });
      const chunks: Buffer[] = [];
      child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
      child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(
          new SpawnError(`Could not run ${this.#executable}: ${error.message}`, { cause: error, backend: this.name }),
        );
      });
      child.once("close", (code, signal) => {
        clearTimeout(timer);
        const output = Buffer.concat(chunks).toString("utf8");
        if (signal === "SIGKILL" && code === null) {
          resolve({
            exitCode: 124,
            output: `${output}\n[${this.#executable} ${args.slice(0, 2).join(" ")} timed out after ${timeoutMs} ms]`,
          });
        } else {
          resolve({ exitCode: code ?? 1, output });
        }
      });
    });
  }
}

/** The configured executable, or the first of apptainer / singularity on PATH. */
function findExecutable(configured: string | undefined): string {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter(Boolean);
  const candidates = configured === undefined ? ["apptainer", "singularity"] : [configured];
  for (const name of candidates) {
    if (name.includes("/")) {
      if (isExecutable(name)) return name;
      continue;
    }
    for (const dir of dirs) {
      const path = join(dir, name);
      if (isExecutable(path)) return path;
    }
  }
  throw new SpawnError(
    configured === undefined
      ? "Neither apptainer nor singularity was found on PATH; install Apptainer or pass `executable`"
      : `The Apptainer executable ${JSON.stringify(configured)} was not found or is not executable`,
    { backend: "apptainer" },
  );
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Default scratch directory, as the Python backend chose it: /scratch when writable, else the temp dir. */
export function defaultScratchDir(): string {
  const user = process.env.USER ?? "shellwright";
  try {
    accessSync("/scratch", fsConstants.W_OK);
    return join("/scratch", user, "shellwright");
  } catch {
    return join(tmpdir(), `shellwright-apptainer-${user}`);
  }
}
