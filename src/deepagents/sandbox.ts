/**
 * A Shellwright environment as LangChain deepagents' sandbox
 * (`SandboxBackendProtocolV2`, through deepagents' own BaseSandbox), for
 * `createDeepAgent({ backend })`, on any backend.
 *
 * `execute` runs in the session itself, so a `cd` or an `export` carries
 * over to the next command, with the session's timeout (the tree killed) and
 * output bound; secrets are masked in what it returns. The file operations
 * run on the file tools' engine (files.ts); listing, reading, grep and glob
 * are BaseSandbox's, run as isolated commands, so they never undo a `cd` that
 * runs beside them (deepagents runs tool calls in parallel).
 */

import { randomBytes } from "node:crypto";
import type {
  EditResult,
  ExecuteResponse,
  FileDownloadResponse,
  FileUploadResponse,
  GlobResult,
  GrepResult,
  LsResult,
  ReadResult,
} from "deepagents";
import type { Environment } from "../core/environment.js";
import { InvalidOptionError, SessionClosedError } from "../core/errors.js";
import { describe, plainObject, rejectUnknown } from "../core/options.js";
import { validateGuardOptions, type WriteGuardOptions } from "../tools/files/path-guard.js";
import { redactorFor } from "../tools/shared/redaction.js";
import { downloadFile, editFile, uploadFile } from "./files.js";
import { loadDeepagents } from "./load-deepagents.js";

export interface ShellwrightSandboxOptions extends WriteGuardOptions {
  /** Files written when the sandbox starts: path to text or bytes. */
  initialFiles?: Record<string, string | Uint8Array>;
  /** Mask secrets in what commands and reads return (docs/secrets.md). @default true */
  redactSecrets?: boolean;
}

type Source = Environment | (() => Promise<Environment>);

const { BaseSandbox } = loadDeepagents();

export class ShellwrightSandbox extends BaseSandbox {
  readonly id: string;
  private environment: Environment | undefined;
  private readonly open: (() => Promise<Environment>) | undefined;
  private readonly guard: WriteGuardOptions;
  private readonly initialFiles: Record<string, string | Uint8Array>;
  private readonly redactSecrets: boolean;
  private starting: Promise<void> | undefined;
  /** This sandbox with an isolated `execute`, for BaseSandbox's own commands. */
  private readonly quiet: ShellwrightSandbox;

  /**
   * Over an open environment (running at once), or over a function that opens
   * one when `initialize()` is called. `close()` closes the environment.
   */
  constructor(source: Source, options: ShellwrightSandboxOptions = {}) {
    super();
    const raw = plainObject("options", options);
    rejectUnknown("ShellwrightSandbox", raw, ["initialFiles", "redactSecrets", "safeRoot", "denyPaths"]);
    const { initialFiles = {}, redactSecrets = true, ...guard } = options;
    validateGuardOptions(guard);
    if (typeof initialFiles !== "object" || initialFiles === null)
      throw new InvalidOptionError("initialFiles", `initialFiles must be an object, got ${describe(initialFiles)}`);
    if (typeof redactSecrets !== "boolean")
      throw new InvalidOptionError(
        "redactSecrets",
        `redactSecrets must be true or false, got ${describe(redactSecrets)}`,
      );
    if (typeof source === "function") this.open = source;
    else if (typeof source === "object" && source !== null && typeof source.execute === "function")
      this.environment = source;
    else
      throw new InvalidOptionError(
        "source",
        `ShellwrightSandbox takes an Environment or a function that opens one, got ${describe(source)}`,
      );
    this.id = `shellwright-${this.environment?.id ?? randomBytes(6).toString("hex")}`;
    this.guard = guard;
    this.initialFiles = initialFiles;
    this.redactSecrets = redactSecrets;
    this.quiet = Object.create(this, {
      execute: { value: (command: string) => this.run(command, true) },
    }) as ShellwrightSandbox;
  }

  /** Opens the environment (when given a function) and writes the initial files. */
  static async create(source: Source, options: ShellwrightSandboxOptions = {}): Promise<ShellwrightSandbox> {
    const sandbox = new ShellwrightSandbox(source, options);
    await sandbox.initialize();
    return sandbox;
  }

  get isRunning(): boolean {
    return this.environment !== undefined && !this.environment.closed;
  }

  /** The environment the sandbox runs on. */
  get session(): Environment {
    if (this.environment === undefined) throw new SessionClosedError("the sandbox has not been initialized");
    return this.environment;
  }

  initialize(): Promise<void> {
    // A failed start is not kept: the next initialize() tries again (a backend that was not ready yet).
    this.starting ??= (async () => {
      this.environment ??= await this.open!();
      const files = Object.entries(this.initialFiles).map(([path, content]): [string, Uint8Array] => [
        path,
        typeof content === "string" ? Buffer.from(content) : content,
      ]);
      const failed = (await this.uploadFiles(files)).filter((result) => result.error !== null);
      if (failed.length > 0)
        throw new InvalidOptionError(
          "initialFiles",
          `initialFiles could not be written: ${failed.map((f) => `${f.path} (${f.error})`).join(", ")}`,
        );
    })().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  async close(): Promise<void> {
    await this.environment?.close();
  }

  execute(command: string): Promise<ExecuteResponse> {
    return this.run(command, false);
  }

  uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
    return Promise.all(files.map(([path, content]) => uploadFile(this.session, path, content, this.guard)));
  }

  downloadFiles(paths: string[]): Promise<FileDownloadResponse[]> {
    return Promise.all(paths.map((path) => downloadFile(this.session, path)));
  }

  override async edit(filePath: string, oldString: string, newString: string, replaceAll = false): Promise<EditResult> {
    return editFile(this.session, filePath, oldString, newString, replaceAll, this.guard);
  }

  override ls(path: string): Promise<LsResult> {
    return super.ls.call(this.quiet, path);
  }

  override read(filePath: string, offset?: number, limit?: number): Promise<ReadResult> {
    return super.read.call(this.quiet, filePath, offset, limit);
  }

  override grep(pattern: string, path?: string, glob?: string | null, maxCount?: number | null): Promise<GrepResult> {
    return super.grep.call(this.quiet, pattern, path, glob, maxCount);
  }

  override glob(pattern: string, path?: string): Promise<GlobResult> {
    return super.glob.call(this.quiet, pattern, path);
  }

  private async run(command: string, isolated: boolean): Promise<ExecuteResponse> {
    const session = this.session;
    const result = await session.execute(command, isolated ? { isolated: true } : {});
    const redactor = this.redactSecrets ? redactorFor({ session }) : undefined;
    return {
      output: redactor?.redact(result.output) ?? result.output,
      exitCode: result.exitCode,
      truncated: result.truncated,
    };
  }
}
