/**
 * The Daytona backend, over `@daytonaio/sdk`: one sandbox (created, or
 * resumed by name or label), each command run asynchronously in a Daytona
 * process session so its output streams back as it arrives
 * (`getSessionCommandLogs` with callbacks) and its exit code is polled.
 *
 * Before each command the sandbox is made sure to be running (a stopped or
 * archived one is started again). Session commands have no timeout of their
 * own, so the command runs under coreutils `timeout`
 * set past the session's deadline: a backstop for when this process dies,
 * while the session's own timeout kills the tree inside the sandbox first.
 */

import type { PortUrl } from "../../core/environment.js";
import { daytonaPreviewUrl } from "./preview.js";
import { randomBytes } from "node:crypto";
import type * as DaytonaSdk from "@daytonaio/sdk";
import { BackendUnavailableError } from "../../core/errors.js";
import { shellQuote } from "../../core/script.js";
import { probeSandbox } from "./probe.js";
import { MAX_INLINE_SCRIPT_BYTES, type ProcessHandle, type RunOptions } from "../../core/transport.js";
import type { CallMarks } from "../../core/call-marks.js";
import { bashLaunch } from "../shared/launch.js";
import { messageOf } from "../shared/error-message.js";
import { sdkProcessHandle } from "../shared/sdk-handle.js";
import { CallCancel } from "../shared/call-cancel.js";
import { pollExitCode } from "./poll-exit.js";
import type { SandboxWrite } from "../shared/sdk-sync.js";
import { SdkTransport } from "../shared/sdk-transport.js";
import { daytonaBox } from "./box.js";
import { removeDirLine, sandboxCommand } from "../shared/sandbox-command.js";
import { ExactOutput } from "../shared/exact-output.js";
import type { NormalizedSyncConfig } from "../../sync/options.js";

import type { DaytonaCreateParams, DaytonaSandbox, DaytonaApi } from "./sdk.js";

export type { DaytonaProcess, DaytonaFileSystem, DaytonaCreateParams, DaytonaSandbox, DaytonaApi } from "./sdk.js";

export interface DaytonaTransportOptions {
  /** A registry image; without it (and without `snapshot`) Daytona's default snapshot. */
  image?: string | undefined;
  snapshot?: string | undefined;
  /** Resume the sandbox with this name, or create it under this name. */
  name?: string | undefined;
  /** Resume the first sandbox with these labels; a created sandbox gets them. */
  labels: Record<string, string>;
  cpu?: number | undefined;
  memoryGiB?: number | undefined;
  diskGiB?: number | undefined;
  /** Minutes of inactivity before Daytona stops the sandbox (0 = never). */
  autoStopMinutes?: number | undefined;
  /** The sandbox's environment, set at creation (never on a command line). */
  env: Record<string, string>;
  /** What close() does to the sandbox. */
  onClose: "delete" | "stop" | "keep";
  client?: DaytonaApi | undefined;
  /** How far past the session's deadline the in-sandbox `timeout` backstop fires. */
  serverTimeoutMarginMs: number;
  /** Seconds Daytona may take to create or start a sandbox. */
  startTimeoutSec: number;
  /** Files and directories mirrored into the sandbox before commands, through `fs.uploadFiles`. */
  sync?: NormalizedSyncConfig | undefined;
  /** Run calls through the fast-path helper (docs/fast-path.md); false: one session command per call. */
  fastPath?: boolean | undefined;
  warn: (message: string) => void;
  /** A sandbox to run in from the start instead of one made or resumed (a fork's child: Daytona's fork of the parent's). */
  sandbox?: DaytonaSandbox | undefined;
}

const CONTROL_TIMEOUT_SEC = 30;
/** How long Daytona may take to snapshot a sandbox. */
const SNAPSHOT_TIMEOUT_SEC = 300;
const RESTARTABLE = new Set(["stopped", "archived", "paused", "stopping", "archiving", "pausing"]);
const GONE = new Set(["destroyed", "destroying", "error", "build_failed"]);

export class DaytonaTransport extends SdkTransport<DaytonaSandbox> {
  readonly #options: DaytonaTransportOptions;
  #client: DaytonaApi | undefined;
  #sessionId: string | undefined;
  #hasTimeout = false;
  /** The sandbox's tail takes --pid (GNU coreutils): the exact output copy is possible (sandboxCommand). */
  #hasTailPid = false;
  /**
   * The session's directory in the sandbox (mode 700, made with each process session): a call's stdin file
   * and its output copies, which may hold secrets, are there and nowhere else.
   */
  #privateDir: string | undefined;
  /** Output copies of finished commands, removed by the next command. */
  #stale: string[] = [];
  /** Serialises the wake-up check: overlapping commands start a stopped sandbox once. */
  #ready: Promise<DaytonaSandbox> | undefined;

  constructor(options: DaytonaTransportOptions) {
    super("daytona", "Daytona", options);
    this.#options = options;
    this.sandbox = options.sandbox;
    if (options.fastPath !== false)
      this.enableFastPath(
        daytonaBox(() => this.runningSandbox(), this.tempDir),
        () => this.sandbox?.id,
        "the Daytona sandbox",
      );
  }

  override async start(): Promise<void> {
    await this.#ensureReady();
  }

  get boxId(): string | undefined {
    return this.sandbox?.id;
  }

  /** Saves the running sandbox's filesystem as the Daytona snapshot `name` (a checkpoint). */
  async snapshotSandbox(name: string): Promise<void> {
    await this.runningSandbox().createSnapshot(name, SNAPSHOT_TIMEOUT_SEC);
  }

  async deleteSnapshot(name: string): Promise<void> {
    await (await this.#getClient()).snapshot.delete(name);
  }

  /** A new sandbox of the session's config from a snapshot (a rollback's), without the name: not yet the session's. */
  async sandboxFromSnapshot(name: string): Promise<DaytonaSandbox> {
    if (this.closed) throw new BackendUnavailableError("The Daytona backend was stopped", { backend: this.name });
    return this.#create(name);
  }

  /** Daytona's fork of the running sandbox: a new sandbox with a clone of its files (a fork's child). */
  async forkSandbox(): Promise<DaytonaSandbox> {
    return this.runningSandbox().fork(undefined, this.#options.startTimeoutSec);
  }

  async discard(sandbox: DaytonaSandbox): Promise<void> {
    await sandbox.delete();
  }

  protected override sandboxSwapped(): void {
    this.#sessionId = undefined; // the next command opens a process session in the new sandbox
  }

  /** Makes sure the sandbox runs (starting a stopped one, recreating a destroyed one), then syncs files. */
  async beforeExecute(): Promise<void> {
    await this.#ensureReady();
    await this.syncQuietly();
  }

  override runBash(script: string, options: RunOptions): ProcessHandle {
    const sandbox = this.sandbox;
    const sessionId = this.#sessionId;
    const marks = this.newCallMarks();
    const apart = options.separateStreams === true;
    const cancel = new CallCancel(
      () => this.killByMark(marks),
      // The last resort: stop the sandbox; the next command starts it again.
      () => this.#stopSandbox(sandbox),
    );
    const handle = sdkProcessHandle({
      backend: this.name,
      separateStreams: apart,
      run: async (sink, errors) => {
        if (sandbox === undefined || sessionId === undefined)
          throw new BackendUnavailableError("The Daytona sandbox is not running", { backend: this.name });
        // Daytona hands logs over as decoded text, which turns bytes that are not
        // UTF-8 into U+FFFD. The command's output goes to a file, streamed to the
        // logs from there (sandboxCommand); only when the text shows a U+FFFD is
        // that file fetched for the exact bytes. stderr apart gets a file of its own, for the same reason.
        const dir = this.#privateDir;
        const copy = this.#hasTailPid && dir !== undefined ? `${dir}/out-${randomBytes(6).toString("hex")}` : undefined;
        const errCopy = copy !== undefined && apart ? `${copy}.err` : undefined;
        const command = await this.#prepare(sandbox, script, options, marks, { copy, errCopy });
        // Killed during the preparation (a stdin's upload): never started. What it was to remove waits in the
        // private directory, which goes at the close.
        cancel.beforeStart();
        const { cmdId } = await sandbox.process.executeSessionCommand(sessionId, { command, runAsync: true });
        void cancel.started();
        const exact = (to: typeof sink, file: string | undefined): ExactOutput =>
          new ExactOutput(to, () =>
            file === undefined
              ? Promise.reject(new Error("no output copy (the sandbox's tail has no --pid)"))
              : sandbox.fs.downloadFile(file, CONTROL_TIMEOUT_SEC),
          );
        const output = exact(sink, copy);
        const errorOutput = apart ? exact(errors, errCopy) : output;
        let logsDone = false;
        // The copy is removed by a later command, once nothing reads it any more.
        let retired = false;
        const retire = (): void => {
          if (copy === undefined || retired) return;
          retired = true;
          this.#stale.push(copy);
          if (errCopy !== undefined) this.#stale.push(errCopy);
        };
        void sandbox.process
          .getSessionCommandLogs(
            sessionId,
            cmdId,
            (chunk) => output.push(chunk),
            (chunk) => errorOutput.push(chunk),
          )
          .catch(() => undefined)
          .then(() => {
            logsDone = true;
            return Promise.all([output.logsEnded(), apart ? errorOutput.logsEnded() : undefined]);
          })
          .finally(retire);
        const exitCode = await pollExitCode(
          () => sandbox.process.getSessionCommand(sessionId, cmdId),
          () => logsDone,
          () => cancel.givenUp,
        ).finally(() => cancel.ended());
        // The logs may still be on their way (they have a channel of their own): text that shows a U+FFFD
        // only after this still fetches the copy. Until the session gives up on it (outputAfterExitMs),
        // a background child holding the log stream open keeps the copy.
        output.exited();
        if (apart) errorOutput.exited();
        setTimeout(retire, this.outputAfterExitMs).unref();
        await Promise.all([output.settled(), apart ? errorOutput.settled() : undefined]);
        return exitCode;
      },
      cancel: () => cancel.cancel(),
    });
    return this.guard(handle, marks);
  }

  /** One multipart request for the lot. */
  protected override async writeFiles(sandbox: DaytonaSandbox, files: readonly SandboxWrite[]): Promise<void> {
    await sandbox.fs.uploadFiles(files.map((file) => ({ source: file.bytes, destination: file.remote })));
  }

  protected override async release(sandbox: DaytonaSandbox): Promise<void> {
    // A stopped or kept sandbox keeps nothing of the session's: its stdin files and output copies go.
    if (this.#privateDir !== undefined)
      await sandbox.process
        .executeCommand(removeDirLine(this.#privateDir), undefined, undefined, CONTROL_TIMEOUT_SEC)
        .catch(() => undefined);
    if (this.#sessionId !== undefined) await sandbox.process.deleteSession(this.#sessionId).catch(() => undefined);
    if (this.#options.onClose === "delete") await sandbox.delete();
    else if (this.#options.onClose === "stop") await sandbox.stop();
  }

  protected override describeRelease(sandbox: DaytonaSandbox): string {
    return `${this.#options.onClose} Daytona sandbox ${sandbox.name || sandbox.id}`;
  }

  /** The running sandbox's preview link (preview.ts): asking for one never wakes or replaces the sandbox. */
  async portUrl(port: number): Promise<PortUrl> {
    return daytonaPreviewUrl(port, this.runningSandbox());
  }

  #ensureReady(): Promise<DaytonaSandbox> {
    if (this.closed)
      return Promise.reject(new BackendUnavailableError("The Daytona backend was stopped", { backend: this.name }));
    this.#ready ??= this.#wake().finally(() => {
      this.#ready = undefined;
    });
    return this.#ready;
  }

  async #wake(): Promise<DaytonaSandbox> {
    try {
      let sandbox = this.sandbox;
      if (sandbox !== undefined) {
        try {
          await sandbox.refreshData();
        } catch {
          sandbox = undefined; // deleted behind our back: make a new one
        }
      }
      if (sandbox !== undefined && GONE.has(String(sandbox.state))) sandbox = undefined;
      if (sandbox === undefined) {
        sandbox = (await this.#resume()) ?? (await this.#create());
        this.sandbox = sandbox;
        this.#sessionId = undefined;
        this.fileSync?.invalidate(); // another sandbox: assume none of the synced files
      }
      if (RESTARTABLE.has(String(sandbox.state))) {
        await sandbox.start(this.#options.startTimeoutSec);
        this.#sessionId = undefined; // a restart ends the sandbox's process sessions
      }
      if (this.#sessionId === undefined) {
        const sessionId = `shellwright-${randomBytes(6).toString("hex")}`;
        await sandbox.process.createSession(sessionId);
        this.#sessionId = sessionId;
        const probe = await probeSandbox(sandbox, this.#privateDir);
        this.#privateDir = probe.privateDir;
        this.#hasTimeout = probe.hasTimeout;
        this.#hasTailPid = probe.hasTailPid;
      }
      return sandbox;
    } catch (error) {
      if (error instanceof BackendUnavailableError) throw error;
      throw new BackendUnavailableError(`Could not get a running Daytona sandbox: ${messageOf(error)}`, {
        cause: error,
        backend: this.name,
      });
    }
  }

  async #resume(): Promise<DaytonaSandbox | undefined> {
    const client = await this.#getClient();
    const { name, labels } = this.#options;
    if (name !== undefined) {
      try {
        return await client.get(name);
      } catch {
        // not there yet: created below under this name
      }
    }
    if (Object.keys(labels).length > 0) {
      for await (const sandbox of client.list({ labels, limit: 1 })) {
        if (!GONE.has(String(sandbox.state))) return sandbox;
      }
    }
    return undefined;
  }

  /** A new sandbox of the session's config, or from the Daytona snapshot `from` (then without the session's name). */
  async #create(from?: string): Promise<DaytonaSandbox> {
    const options = this.#options;
    const client = await this.#getClient();
    const base: DaytonaCreateParams = { labels: { ...options.labels } };
    if (options.name !== undefined && from === undefined) base.name = options.name;
    if (Object.keys(options.env).length > 0) base.envVars = { ...options.env };
    if (options.autoStopMinutes !== undefined) base.autoStopInterval = options.autoStopMinutes;
    const resources: NonNullable<DaytonaCreateParams["resources"]> = {};
    if (options.cpu !== undefined) resources.cpu = options.cpu;
    if (options.memoryGiB !== undefined) resources.memory = options.memoryGiB;
    if (options.diskGiB !== undefined) resources.disk = options.diskGiB;
    const snapshot = from ?? options.snapshot;
    const params =
      options.image !== undefined && from === undefined
        ? { ...base, image: options.image, ...(Object.keys(resources).length > 0 ? { resources } : {}) }
        : { ...base, ...(snapshot === undefined ? {} : { snapshot }) };
    return client.create(params, { timeout: options.startTimeoutSec });
  }

  async #getClient(): Promise<DaytonaApi> {
    this.#client ??= this.#options.client ?? (await loadDaytonaClient());
    return this.#client;
  }

  /** The command line for one call; a stdin (or a script too long for argv) goes up as a private file first, never on it. */
  async #prepare(
    sandbox: DaytonaSandbox,
    script: string,
    options: RunOptions,
    marks: CallMarks,
    copies: { copy: string | undefined; errCopy: string | undefined },
  ): Promise<string> {
    const launch = bashLaunch(script, options, MAX_INLINE_SCRIPT_BYTES, marks);
    const removeFirst = this.#stale.splice(0);
    const timeoutSec =
      this.#hasTimeout && options.timeoutMs !== undefined
        ? Math.max(1, Math.ceil((options.timeoutMs + this.#options.serverTimeoutMarginMs) / 1000))
        : undefined;
    // No stdin, or an empty one: /dev/null gives the same, with no upload.
    if (launch.stdin === undefined || launch.stdin.length === 0)
      return sandboxCommand(launch.argv, { timeoutSec, removeFirst, ...copies });
    // A stdin may be a secret (`--password-stdin`): a file in the private directory, unlinked before the command runs.
    const file = `${this.#privateDir!}/stdin-${randomBytes(6).toString("hex")}`;
    await sandbox.fs.uploadFile(Buffer.from(launch.stdin), file);
    return sandboxCommand(launch.argv, { timeoutSec, stdinFile: file, removeFirst, ...copies });
  }

  async #stopSandbox(sandbox: DaytonaSandbox | undefined): Promise<void> {
    if (sandbox === undefined) return;
    this.#sessionId = undefined;
    await sandbox.stop();
  }

  protected override async control(script: string): Promise<{ exitCode: number; output: string }> {
    const sandbox = this.runningSandbox();
    const response = await sandbox.process.executeCommand(
      `bash -c ${shellQuote(script)}`,
      undefined,
      undefined,
      CONTROL_TIMEOUT_SEC,
    );
    return { exitCode: response.exitCode, output: response.result };
  }
}

async function loadDaytonaClient(): Promise<DaytonaApi> {
  let sdk: typeof DaytonaSdk;
  try {
    sdk = await import("@daytonaio/sdk");
  } catch (error) {
    throw new BackendUnavailableError(
      `The daytona backend needs Daytona's SDK, which is not installed: run \`npm install @daytonaio/sdk\` (${messageOf(error)})`,
      { cause: error, backend: "daytona" },
    );
  }
  // Credentials come from DAYTONA_API_KEY (and DAYTONA_API_URL, DAYTONA_TARGET), as Daytona's own tools read them.
  return new sdk.Daytona();
}
