/**
 * The e2b backend, over E2B's own SDK (npm `e2b`): one sandbox on E2B or on
 * an E2B-compatible platform (a Shellwright `serve --api e2b`), created or
 * connected to by id. Each call is one background command
 * whose stdout and stderr stream back as they arrive; the fast path runs
 * the helper as one long-lived command with its stdin open.
 *
 * The SDK hands output over as decoded text, which turns bytes that are not
 * UTF-8 into U+FFFD: a call's output also goes to a copy in the sandbox,
 * fetched only when the text shows one (ExactOutput). A call's stdin
 * travels as a file in a private directory, never on a command line.
 *
 * E2B ends a sandbox when its timeout passes: while the session is open its
 * timeout is renewed every half of it, so a crashed process leaves the
 * sandbox behind for `sandboxTimeoutMs` at most.
 */

import { randomBytes } from "node:crypto";
import type { PortUrl } from "../../core/environment.js";
import type { CallMarks } from "../../core/call-marks.js";
import { BackendUnavailableError, UnsupportedError } from "../../core/errors.js";
import { shellQuote } from "../../core/script.js";
import { MAX_INLINE_SCRIPT_BYTES, type ProcessHandle, type RunOptions } from "../../core/transport.js";
import { messageOf } from "../shared/error-message.js";
import { ExactOutput } from "../shared/exact-output.js";
import { bashLaunch } from "../shared/launch.js";
import { removeDirLine, sandboxCommand, type SandboxProbe } from "../shared/sandbox-command.js";
import { sdkProcessHandle, type OutputSink } from "../shared/sdk-handle.js";
import type { SandboxWrite } from "../shared/sdk-sync.js";
import { SdkTransport } from "../shared/sdk-transport.js";
import { e2bBox } from "./box.js";
import type { E2bTransportOptions } from "./config.js";
import { acquireSandbox, loadE2bSdk, sandboxFrom } from "./sandboxes.js";
import { renewTimeoutEvery } from "./renewal.js";
import { endCopiedSession, forkSandboxes, withShellHint, writePrivateFile } from "./branching.js";
import {
  arrayBufferOf,
  CONTROL_TIMEOUT_MS,
  exitCodeOf,
  NO_COMMAND_LIMIT_MS,
  probeSandbox,
  runToEnd,
  uploadPrivate,
} from "./commands.js";
import type { E2bCommandHandle, E2bSandbox, E2bSandboxClass } from "./sdk.js";

export type { E2bConnection, E2bSandbox, E2bSandboxClass } from "./sdk.js";

export class E2bTransport extends SdkTransport<E2bSandbox> {
  readonly #options: E2bTransportOptions;
  #sdk: E2bSandboxClass | undefined;
  /** Serialises getting a sandbox: overlapping commands make or connect one once. */
  #ready: Promise<E2bSandbox> | undefined;
  /** Output copies of finished calls, removed by the next call. */
  #stale: string[] = [];
  #renewal: NodeJS.Timeout | undefined;
  /**
   * Each sandbox's probe: the session's private directory there (mode 700: stdin files and output copies) and
   * whether its tail takes --pid (the exact output copy). A rollback's new sandbox is probed before it is swapped in.
   */
  readonly #probes = new WeakMap<E2bSandbox, SandboxProbe>();
  /** Set as stop() begins. */
  #stopping = false;

  constructor(options: E2bTransportOptions) {
    super("e2b", "E2B", options);
    this.#options = options;
    if (options.fastPath !== false)
      this.enableFastPath(
        e2bBox(
          () => this.runningSandbox(),
          (sandbox, bytes) => this.#upload(sandbox, bytes),
        ),
        () => this.sandbox?.sandboxId,
        "the E2B sandbox",
      );
  }

  /** The sandbox's id (undefined before start or after stop). */
  get sandboxId(): string | undefined {
    return this.sandbox?.sandboxId;
  }

  override async start(): Promise<void> {
    await this.#ensureReady();
  }

  /** Makes sure the sandbox is there (start() obtained it; one that ended is not replaced), then syncs files. */
  async beforeExecute(): Promise<void> {
    await this.#ensureReady();
    await this.syncQuietly();
  }

  override runBash(script: string, options: RunOptions): ProcessHandle {
    const sandbox = this.sandbox;
    const marks = this.newCallMarks();
    const apart = options.separateStreams === true;
    let pid: number | undefined;
    /** The handle's kill came: a command not started yet never starts, one starting is killed once it has. */
    let cancelled = false;
    const handle = sdkProcessHandle({
      backend: this.name,
      separateStreams: apart,
      run: async (sink, errors) => {
        if (sandbox === undefined)
          throw new BackendUnavailableError("The E2B sandbox is not running", { backend: this.name });
        const { privateDir: dir, hasTailPid } = this.#prepared(sandbox);
        const copy = hasTailPid ? `${dir}/out-${randomBytes(6).toString("hex")}` : undefined;
        const errCopy = copy !== undefined && apart ? `${copy}.err` : undefined;
        const launch = bashLaunch(script, options, MAX_INLINE_SCRIPT_BYTES, marks);
        const exact = (to: OutputSink, file: string | undefined): ExactOutput =>
          new ExactOutput(to, () =>
            file === undefined
              ? Promise.reject(new Error("no output copy (the sandbox's tail has no --pid)"))
              : sandbox.files.read(file, { format: "bytes" }),
          );
        const output = exact(sink, copy);
        const errorOutput = apart ? exact(errors, errCopy) : output;
        // The stdin file's upload is the first request of a call that has one: a sandbox that ended fails it.
        const start = async (): Promise<E2bCommandHandle> => {
          const stdinFile = launch.stdin === undefined ? undefined : await this.#upload(sandbox, launch.stdin);
          const removeFirst = this.#stale.splice(0);
          if (cancelled) {
            this.#stale.push(...removeFirst, ...(stdinFile === undefined ? [] : [stdinFile]));
            throw new Error("the call was killed before its command started");
          }
          const command = sandboxCommand(launch.argv, { stdinFile, removeFirst, copy, errCopy });
          return sandbox.commands
            .run(command, {
              background: true,
              timeoutMs: NO_COMMAND_LIMIT_MS,
              onStdout: (text) => output.push(text),
              onStderr: (text) => errorOutput.push(text),
            })
            .catch((error: unknown) => {
              // The command that would have removed them never ran: the next call does.
              this.#stale.push(...removeFirst, ...(stdinFile === undefined ? [] : [stdinFile]));
              throw error;
            });
        };
        try {
          const started = await start().catch(async (error: unknown) => {
            throw await this.#whyFailed(sandbox, error);
          });
          pid = started.pid;
          // A kill that came while the command was starting found nothing to kill: it goes now, with whatever the
          // command already started (however it detached, it carries the call's mark).
          if (cancelled) await this.#killStarted(sandbox, started.pid, marks);
          // E2B's stream carries the output before the end: once the exit is in, so is every byte of the text.
          const exitCode = await exitCodeOf(started).catch(async (error: unknown) => {
            throw await this.#whyFailed(sandbox, error);
          });
          output.exited();
          if (apart) errorOutput.exited();
          await Promise.all([output.logsEnded(), apart ? errorOutput.logsEnded() : undefined]);
          return exitCode;
        } finally {
          // Removed by the next call, once nothing reads them.
          if (copy !== undefined) this.#stale.push(copy);
          if (errCopy !== undefined) this.#stale.push(errCopy);
        }
      },
      // The last resort: end the command's process (on a Shellwright host, its whole tree).
      cancel: () => {
        cancelled = true;
        return sandbox !== undefined && pid !== undefined ? sandbox.commands.kill(pid) : undefined;
      },
    });
    return this.guard(handle, marks);
  }

  /**
   * The address E2B's proxy serves the port at (https; the server must listen on 0.0.0.0). A platform reached
   * through `sandboxUrl` (a Shellwright host) has no such proxy unless `domain` names one.
   */
  async portUrl(port: number): Promise<PortUrl> {
    const { sandboxUrl, domain } = this.#options.connection;
    // Either may come from the SDK's environment variables, as it reads them.
    if ((sandboxUrl ?? process.env.E2B_SANDBOX_URL) !== undefined && (domain ?? process.env.E2B_DOMAIN) === undefined)
      throw new UnsupportedError(
        `No URL for port ${port}: the sandbox is reached through sandboxUrl, where E2B's port proxy ` +
          "(PORT-SANDBOX.domain) is not known to exist; set domain to the platform's domain if it serves one",
        { backend: this.name },
      );
    return { url: `https://${(await this.#ensureReady()).getHost(port)}`, headers: {} };
  }

  /** One request for the lot. */
  protected override async writeFiles(sandbox: E2bSandbox, files: readonly SandboxWrite[]): Promise<void> {
    await sandbox.files.write(files.map((file) => ({ path: file.remote, data: arrayBufferOf(file.bytes) })));
  }

  /**
   * The private directory goes with the close's sweep, in its exec: also before a kill, since a platform whose
   * sandbox is a host that stays (a Shellwright `serve --api e2b`) keeps its files, the last call's output copy too.
   */
  protected override closeCleanup(): string | undefined {
    const dir = this.sandbox === undefined ? undefined : this.#probes.get(this.sandbox)?.privateDir;
    return dir === undefined ? undefined : removeDirLine(dir);
  }

  protected override async release(sandbox: E2bSandbox): Promise<void> {
    clearInterval(this.#renewal);
    if (this.#options.onClose === "kill") {
      await sandbox.kill();
      return;
    }
    // A kept sandbox keeps nothing of the session's: its stdin files and output copies go (again, should the
    // sweep's exec have failed; and a sandbox obtained after stop() had no sweep).
    const dir = this.#probes.get(sandbox)?.privateDir;
    if (dir !== undefined) await runToEnd(sandbox, removeDirLine(dir), CONTROL_TIMEOUT_MS).catch(() => undefined);
  }

  protected override describeRelease(sandbox: E2bSandbox): string {
    return `${this.#options.onClose} E2B sandbox ${sandbox.sandboxId}`;
  }

  async discard(sandbox: E2bSandbox): Promise<void> {
    await sandbox.kill();
  }

  protected override async control(script: string): Promise<{ exitCode: number; output: string }> {
    return runToEnd(this.runningSandbox(), `bash -c ${shellQuote(script)}`, CONTROL_TIMEOUT_MS);
  }

  /** Kills a call's command that started after its kill, and every process carrying the call's mark. */
  async #killStarted(sandbox: E2bSandbox, pid: number, marks: CallMarks): Promise<void> {
    await this.killByMark(marks);
    await sandbox.commands.kill(pid).catch(() => undefined);
  }

  /** A command that could not start or whose stream broke: a sandbox that ended says so, with what to do. */
  async #whyFailed(sandbox: E2bSandbox, error: unknown): Promise<unknown> {
    const running = await sandbox.isRunning().catch(() => true);
    if (running) return error;
    return new BackendUnavailableError(
      `E2B sandbox ${sandbox.sandboxId} is no longer running (it was killed, or its timeout passed); ` +
        "its files and processes are gone: open a new session",
      { cause: error, backend: this.name },
    );
  }

  /** The sandbox's probe; none yet (or the close begun) is an error. */
  #prepared(sandbox: E2bSandbox | undefined): SandboxProbe {
    if (this.#stopping) throw this.#stopped();
    const probe = sandbox === undefined ? undefined : this.#probes.get(sandbox);
    if (probe === undefined) throw new BackendUnavailableError("The E2B sandbox is not ready", { backend: this.name });
    return probe;
  }

  /**
   * Writes a stdin file into the private directory. E2B's write makes a missing parent directory (mode 755):
   * an upload that the close overtook (the directory already removed) takes its file, and the directory it
   * made again, away again, or a host that stays (a Shellwright serve) would keep it.
   */
  async #upload(sandbox: E2bSandbox, bytes: Uint8Array): Promise<string> {
    const dir = this.#prepared(sandbox).privateDir;
    const path = await uploadPrivate(sandbox, dir, bytes);
    if (this.#stopping) {
      await runToEnd(sandbox, removeDirLine(dir), CONTROL_TIMEOUT_MS).catch(() => undefined);
      throw this.#stopped();
    }
    return path;
  }

  #stopped(): BackendUnavailableError {
    return new BackendUnavailableError("The E2B backend was stopped", { backend: this.name });
  }

  /** No upload starts once the close has begun: its sweep removes the private directory. */
  override async stop(): Promise<void> {
    this.#stopping = true;
    await super.stop();
  }

  #ensureReady(): Promise<E2bSandbox> {
    if (this.closed) return Promise.reject(this.#stopped());
    if (this.sandbox !== undefined) return Promise.resolve(this.sandbox);
    this.#ready ??= this.#obtain().finally(() => {
      this.#ready = undefined;
    });
    return this.#ready;
  }

  async #obtain(): Promise<E2bSandbox> {
    const options = this.#options;
    let sandbox: E2bSandbox;
    try {
      sandbox = await acquireSandbox(await this.#loadSdk(), options);
    } catch (error) {
      if (error instanceof BackendUnavailableError) throw error;
      const what =
        options.sandboxId !== undefined ? `connect to E2B sandbox ${options.sandboxId}` : "create an E2B sandbox";
      throw new BackendUnavailableError(`Could not ${what}: ${messageOf(error)}`, { cause: error, backend: this.name });
    }
    try {
      await this.#probe(sandbox);
      const forked = options.forked;
      if (forked !== undefined) await endCopiedSession(sandbox, forked.parentMark, forked.parentDir);
    } catch (error) {
      if (options.sandboxId === undefined) await sandbox.kill().catch(() => undefined);
      throw new BackendUnavailableError(`Could not prepare E2B sandbox ${sandbox.sandboxId}: ${messageOf(error)}`, {
        cause: error,
        backend: this.name,
      });
    }
    if (this.closed) {
      await this.release(sandbox).catch(() => undefined);
      throw this.#stopped();
    }
    this.sandbox = sandbox;
    this.fileSync?.invalidate(); // a new sandbox has none of the synced files
    if (options.renewTimeout) this.#renew(sandbox);
    return sandbox;
  }

  async #probe(sandbox: E2bSandbox): Promise<void> {
    this.#probes.set(sandbox, await probeSandbox(sandbox, CONTROL_TIMEOUT_MS));
  }

  async #loadSdk(): Promise<E2bSandboxClass> {
    return (this.#sdk ??= this.#options.sdk ?? (await loadE2bSdk()));
  }

  /** E2B's snapshot of the session's sandbox now (a checkpoint): its id. */
  async snapshotSandbox(): Promise<string> {
    try {
      return (await this.runningSandbox().createSnapshot()).snapshotId;
    } catch (error) {
      throw withShellHint(error, "snapshot sandboxes");
    }
  }

  async deleteSnapshot(snapshotId: string): Promise<void> {
    await (await this.#loadSdk()).deleteSnapshot(snapshotId, this.#options.connection);
  }

  /**
   * A new sandbox from a snapshot (a rollback's), not yet the session's: probed, and what the session had running
   * when the snapshot was taken ended in it (E2B's snapshot keeps the memory).
   */
  async sandboxFromSnapshot(snapshotId: string): Promise<E2bSandbox> {
    if (this.closed) throw this.#stopped();
    const sandbox = await sandboxFrom(await this.#loadSdk(), snapshotId, this.#options);
    try {
      await this.#probe(sandbox);
      await endCopiedSession(sandbox, this.sessionMark, this.#prepared(this.sandbox).privateDir);
    } catch (error) {
      await sandbox.kill().catch(() => undefined);
      throw error;
    }
    return sandbox;
  }

  /** E2B's fork of the session's sandbox: `count` started sandboxes with a copy of it (a fork's children). */
  async forkSandboxes(count: number): Promise<E2bSandbox[]> {
    return forkSandboxes(this.runningSandbox(), count, this.#options.sandboxTimeoutMs);
  }

  /** What a fork's child needs of this session to end, in its copy, what this session had running. */
  get forkOrigin(): { parentMark: string; parentDir: string } {
    return { parentMark: this.sessionMark, parentDir: this.#prepared(this.sandbox).privateDir };
  }

  /** Writes `path` (mode 0600) in a sandbox that is not yet the session's (a rollback's), through its private directory. */
  async writeInto(sandbox: E2bSandbox, path: string, bytes: Uint8Array): Promise<void> {
    await writePrivateFile(sandbox, this.#prepared(sandbox).privateDir, path, bytes);
  }

  /** A rollback swapped its new sandbox in (its probe was made before): its timeout is renewed from now on. */
  protected override sandboxSwapped(): void {
    this.#stale = []; // the old sandbox's files, gone with it
    if (this.#options.renewTimeout) this.#renew(this.runningSandbox());
  }

  /** Renews the sandbox's timeout every half of it while the session holds it. */
  #renew(sandbox: E2bSandbox): void {
    clearInterval(this.#renewal);
    const { sandboxTimeoutMs, warn } = this.#options;
    this.#renewal = renewTimeoutEvery(sandbox, sandboxTimeoutMs, sandboxTimeoutMs / 2, warn);
  }
}
