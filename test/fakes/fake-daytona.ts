/**
 * FAKE Daytona client for tests: NOT Daytona. It has the shapes of the parts
 * of `@daytonaio/sdk` that the daytona backend calls — `create`, `get`,
 * `list`, and on a sandbox `refreshData/start/stop/delete`,
 * `process.executeCommand`, process sessions (`createSession`,
 * `executeSessionCommand` with runAsync, `getSessionCommand`,
 * `getSessionCommandLogs` with callbacks, `deleteSession`) and `fs.*` — and
 * runs every command with `sh -c` on this machine. Daytona's cloud cannot be
 * reached from here; this is the network boundary.
 *
 * Like the real SDK it hands logs to the callbacks as decoded UTF-8 strings,
 * and like a real session it gives a session command a stdin that is never
 * closed.
 *
 * Snapshots and forks (`Sandbox.createSnapshot`, `Sandbox.fork`,
 * `snapshot.delete`, `create({ snapshot })`): with `{ privateTmp: true }`
 * each sandbox has a /tmp of its own (private-tmp.ts), which a snapshot or a
 * fork copies, as Daytona's capture the sandbox's filesystem; without it
 * every fake sandbox shares this machine's files, and a snapshot holds none.
 */

import type { ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type * as DaytonaSdk from "@daytonaio/sdk";
import type {
  DaytonaApi,
  DaytonaFileSystem,
  DaytonaProcess,
  DaytonaSandbox,
} from "../../src/backends/daytona/transport.js";
import { InitlessBox } from "./initless-box.js";
import { exitCodeOf, hostSandboxEnv, LocalProcessGroup } from "./local-process.js";
import { PrivateTmp } from "./private-tmp.js";

type CreateParams = DaytonaSdk.CreateSandboxFromImageParams | DaytonaSdk.CreateSandboxFromSnapshotParams;

interface SessionCommand {
  id: string;
  command: string;
  exitCode: number | undefined;
  stdout: Buffer[];
  stderr: Buffer[];
  open: number;
  listeners: Set<() => void>;
  /** The command's stdin: the session's pipe, never closed. */
  stdin: NodeJS.WritableStream;
}

class FakeDaytonaProcess implements DaytonaProcess {
  readonly sessions = new Map<string, SessionCommand[]>();
  readonly executed: string[] = [];
  readonly sessionCommands: string[] = [];
  /** Every sendSessionCommandInput (each one SDK call on Daytona). */
  readonly inputs: { commandId: string; data: string }[] = [];
  /** Set to make executeCommand (used for control scripts) fail like an SDK call. */
  failExecuteCommand: ((command: string) => Error | undefined) | undefined;
  /**
   * Hands session command logs to their callbacks this much later than the command wrote them, while
   * getSessionCommand reports the exit at once: Daytona streams logs and reports exit codes on separate
   * channels, and nothing orders the two.
   */
  logDelayMs = 0;
  /** Set to make executeSessionCommand fail like an SDK call. */
  failSessionCommand: Error | undefined;
  readonly #commands = new Map<string, SessionCommand>();
  #next = 0;

  constructor(private readonly sandbox: FakeDaytonaSandbox) {}

  async executeCommand(
    command: string,
    cwd?: string,
    env?: Record<string, string>,
    timeout?: number,
  ): ReturnType<DaytonaProcess["executeCommand"]> {
    this.sandbox.checkRunning();
    this.executed.push(command);
    const injected = this.failExecuteCommand?.(command);
    if (injected) throw injected;
    const child = this.sandbox.spawnShell(command, { cwd, env, timeoutMs: timeout ? timeout * 1000 : undefined });
    child.stdin!.end();
    const chunks: Buffer[] = [];
    child.stdout!.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr!.on("data", (chunk: Buffer) => chunks.push(chunk));
    const exitCode = await exitCodeOf(child);
    const result = Buffer.concat(chunks).toString("utf8");
    return { exitCode, result };
  }

  async createSession(sessionId: string): Promise<void> {
    this.sandbox.checkRunning();
    if (this.sessions.has(sessionId)) throw new Error(`session ${sessionId} already exists`);
    this.sessions.set(sessionId, []);
  }

  async deleteSession(sessionId: string): Promise<void> {
    this.sessions.delete(sessionId);
  }

  async executeSessionCommand(
    sessionId: string,
    req: { command: string; runAsync?: boolean },
  ): Promise<DaytonaSdk.SessionExecuteResponse> {
    this.sandbox.checkRunning();
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`session ${sessionId} not found`);
    if (this.failSessionCommand) throw this.failSessionCommand;
    if (!req.runAsync) throw new Error("the fake supports runAsync session commands only");
    this.sessionCommands.push(req.command);
    const child = this.sandbox.spawnShell(req.command, {});
    // A session's stdin is a pipe that is never closed: a command that reads it hangs.
    const record: SessionCommand = {
      id: `cmd-${++this.#next}`,
      command: req.command,
      exitCode: undefined,
      stdout: [],
      stderr: [],
      open: 2,
      listeners: new Set(),
      stdin: child.stdin!,
    };
    const notify = (): void => record.listeners.forEach((listener) => listener());
    child.stdout!.on("data", (chunk: Buffer) => (record.stdout.push(chunk), notify()));
    child.stderr!.on("data", (chunk: Buffer) => (record.stderr.push(chunk), notify()));
    child.stdout!.on("close", () => (record.open--, notify()));
    child.stderr!.on("close", () => (record.open--, notify()));
    void exitCodeOf(child).then((code) => {
      record.exitCode = code;
      notify();
    });
    session.push(record);
    this.#commands.set(record.id, record);
    return { cmdId: record.id, output: "", stdout: "", stderr: "" };
  }

  async getSessionCommand(
    sessionId: string,
    commandId: string,
  ): Promise<{ id: string; command: string; exitCode?: number }> {
    this.sandbox.checkRunning();
    const record = this.#find(sessionId, commandId);
    return record.exitCode === undefined
      ? { id: record.id, command: record.command }
      : { id: record.id, command: record.command, exitCode: record.exitCode };
  }

  async sendSessionCommandInput(sessionId: string, commandId: string, data: string): Promise<void> {
    this.sandbox.checkRunning();
    const record = this.#find(sessionId, commandId);
    this.inputs.push({ commandId, data });
    if (record.exitCode !== undefined) throw new Error(`command ${commandId} has exited`);
    await new Promise<void>((resolve) => record.stdin.write(data, () => resolve()));
  }

  getSessionCommandLogs(
    sessionId: string,
    commandId: string,
    onStdout: (chunk: string) => void,
    onStderr: (chunk: string) => void,
  ): Promise<void> {
    const record = this.#find(sessionId, commandId);
    // Decoded to text per stream, as the real SDK's log demultiplexer does.
    const decoders = [new TextDecoder("utf-8"), new TextDecoder("utf-8")];
    const sent = [0, 0];
    return new Promise((resolve) => {
      const pump = (): void => {
        const streams = [record.stdout, record.stderr];
        const callbacks = [onStdout, onStderr];
        streams.forEach((chunks, i) => {
          while (sent[i]! < chunks.length) {
            const text = decoders[i]!.decode(chunks[sent[i]!]!, { stream: true });
            sent[i]!++;
            if (text) callbacks[i]!(text);
          }
        });
        // The real log stream follows until the command has finished.
        if (record.open === 0 || (record.exitCode !== undefined && this.sandbox.state !== "started")) {
          decoders.forEach((decoder, i) => {
            const rest = decoder.decode();
            if (rest) callbacks[i]!(rest);
          });
          record.listeners.delete(listener);
          resolve();
        }
      };
      const delay = this.logDelayMs;
      const listener = delay > 0 ? (): void => void setTimeout(pump, delay) : pump;
      record.listeners.add(listener);
      listener();
    });
  }

  #find(sessionId: string, commandId: string): SessionCommand {
    const record = this.#commands.get(commandId);
    if (!record || !this.sessions.get(sessionId)?.includes(record))
      throw new Error(`command ${commandId} not found in session ${sessionId}`);
    return record;
  }
}

export class FakeDaytonaSandbox implements DaytonaSandbox {
  readonly id: string;
  readonly name: string;
  readonly labels: Record<string, string>;
  state: DaytonaSdk.SandboxState = "started";
  readonly calls: string[] = [];
  readonly process: FakeDaytonaProcess;
  readonly #processes = new LocalProcessGroup();
  readonly #env: Record<string, string>;

  constructor(
    id: number,
    readonly params: CreateParams,
    /** Where its programs run when the client was made with `initlessBox`; on this machine otherwise. */
    readonly box: InitlessBox | undefined,
    readonly client: FakeDaytona,
    /** Its own /tmp, when the client was made with `privateTmp`. */
    readonly files: PrivateTmp | undefined,
  ) {
    this.id = `fake-sandbox-${id}`;
    this.name = params.name ?? this.id;
    this.labels = { ...params.labels };
    this.#env = { ...hostSandboxEnv(), ...params.envVars };
    this.process = new FakeDaytonaProcess(this);
  }

  /** Daytona's snapshot of this sandbox's filesystem, under a name unique among the client's snapshots. */
  async createSnapshot(name: string): Promise<void> {
    this.calls.push(`createSnapshot ${name}`);
    this.checkRunning();
    await this.client.snapshotHold;
    if (this.client.failSnapshot) throw this.client.failSnapshot;
    if (this.client.snapshots.has(name)) throw new Error(`Snapshot with name ${name} already exists`);
    this.client.snapshots.set(name, { files: this.files?.copy() });
  }

  /** Daytona's fork: a new, started sandbox with a copy of this one's files. */
  async fork(params?: { name?: string }): Promise<FakeDaytonaSandbox> {
    this.calls.push("fork");
    this.checkRunning();
    return this.client.add(
      { ...(params?.name === undefined ? {} : { name: params.name }), envVars: this.params.envVars },
      this.files?.copy(),
    );
  }

  checkRunning(): void {
    if (this.state !== "started") throw new Error(`Sandbox ${this.id} is not running (state: ${this.state})`);
  }

  spawnShell(
    command: string,
    options: { cwd?: string | undefined; env?: Record<string, string> | undefined; timeoutMs?: number | undefined },
  ): ChildProcess {
    const shell = ["sh", "-c", command];
    const argv = this.files?.argv(shell) ?? shell;
    return this.#processes.spawn(this.box?.argv(argv) ?? argv, {
      env: { ...this.#env, ...options.env },
      cwd: options.cwd,
      timeoutMs: options.timeoutMs,
    });
  }

  /** The port on this machine (where the fake runs its commands), with a made-up token, not a Daytona preview link. */
  async getPreviewLink(port: number): Promise<{ url: string; token: string; sandboxId: string }> {
    this.calls.push(`getPreviewLink ${port}`);
    return { url: `http://127.0.0.1:${port}`, token: "fake-preview-token", sandboxId: this.id };
  }

  async refreshData(): Promise<void> {
    this.calls.push("refreshData");
    if (this.state === "destroyed") throw new Error(`Sandbox with ID or name ${this.id} not found`);
  }

  async start(): Promise<void> {
    this.calls.push("start");
    if (this.state === "destroyed") throw new Error(`Sandbox ${this.id} was deleted`);
    this.state = "started";
  }

  async stop(): Promise<void> {
    this.calls.push("stop");
    this.#halt("stopped");
  }

  async delete(): Promise<void> {
    this.calls.push("delete");
    this.#halt("destroyed");
  }

  /** What stopping a sandbox does: every process ends and process sessions are gone. */
  #halt(state: DaytonaSdk.SandboxState): void {
    this.state = state;
    this.#processes.killAll();
    if (state === "destroyed") {
      this.box?.stop();
      this.files?.remove();
    }
    this.process.sessions.clear();
  }

  /** Where a path of the sandbox lies on this machine. */
  path(remotePath: string): string {
    return this.files?.hostPath(remotePath) ?? remotePath;
  }

  readonly fs: DaytonaFileSystem & { calls: string[]; lag: { reads: number; bytes: number } } = {
    calls: [],
    /**
     * The next `reads` downloadFile calls return a file without its last `bytes` bytes: a file still
     * being written, as the output copy is while tee catches up with the logs.
     */
    lag: { reads: 0, bytes: 0 },
    uploadFile: async (file: Buffer, remotePath: string) => {
      this.checkRunning();
      this.fs.calls.push(`uploadFile ${remotePath}`);
      mkdirSync(dirname(this.path(remotePath)), { recursive: true });
      writeFileSync(this.path(remotePath), file);
    },
    uploadFiles: async (files: DaytonaSdk.FileUpload[]) => {
      this.checkRunning();
      this.fs.calls.push(`uploadFiles ${files.map((f) => f.destination).join(" ")}`);
      for (const file of files) {
        mkdirSync(dirname(this.path(file.destination)), { recursive: true });
        if (typeof file.source === "string")
          writeFileSync(
            this.path(file.destination),
            new Uint8Array(await import("node:fs/promises").then((fs) => fs.readFile(file.source as string))),
          );
        else writeFileSync(this.path(file.destination), file.source);
      }
    },
    createFolder: async (path: string, mode: string) => {
      this.checkRunning();
      this.fs.calls.push(`createFolder ${path} ${mode}`);
      mkdirSync(this.path(path), { recursive: true, mode: parseInt(mode, 8) });
    },
    deleteFile: async (path: string, recursive?: boolean) => {
      this.checkRunning();
      this.fs.calls.push(`deleteFile ${path}`);
      rmSync(this.path(path), { recursive: recursive ?? false, force: false });
    },
    downloadFile: async (remotePath: string) => {
      this.checkRunning();
      this.fs.calls.push(`downloadFile ${remotePath}`);
      const bytes = readFileSync(this.path(remotePath));
      if (this.fs.lag.reads === 0) return bytes;
      this.fs.lag.reads--;
      return bytes.subarray(0, Math.max(0, bytes.length - this.fs.lag.bytes));
    },
    setFilePermissions: async (path: string, permissions: DaytonaSdk.FilePermissionsParams) => {
      this.checkRunning();
      this.fs.calls.push(`setFilePermissions ${path} ${permissions.mode ?? ""}`);
      if (permissions.mode !== undefined) chmodSync(this.path(path), parseInt(permissions.mode, 8));
    },
  };
}

/** The fake client: what `new Daytona()` would be, minus the cloud. */
export class FakeDaytona implements DaytonaApi {
  readonly sandboxes: FakeDaytonaSandbox[] = [];
  readonly calls: string[] = [];
  /** The snapshots made from sandboxes and not deleted yet, by name, with the files they hold. */
  readonly snapshots = new Map<string, { files: PrivateTmp | undefined }>();
  /** Set to make createSnapshot fail as the SDK call does (a rejected promise). */
  failSnapshot: Error | undefined;
  /** While set, createSnapshot waits for it before it snapshots (a slow snapshot). */
  snapshotHold: Promise<void> | undefined;
  /** Set to make sandbox creation (and a fork) fail as the SDK call does. */
  failCreate: Error | undefined;

  /**
   * With `initlessBox`, each sandbox's programs run in a box whose init never reaps (initless-box.ts); with
   * `privateTmp`, each sandbox has a /tmp of its own (private-tmp.ts).
   */
  constructor(private readonly options: { initlessBox?: boolean; privateTmp?: boolean } = {}) {}

  readonly snapshot = {
    delete: async (name: string): Promise<void> => {
      this.calls.push(`snapshot.delete ${name}`);
      const saved = this.snapshots.get(name);
      if (saved === undefined) throw new Error(`Snapshot ${name} not found`);
      this.snapshots.delete(name);
      saved.files?.remove();
    },
  };

  async create(params: CreateParams = {}): Promise<FakeDaytonaSandbox> {
    this.calls.push(`create ${params.name ?? ""}`);
    if (params.name !== undefined && this.sandboxes.some((s) => s.name === params.name && s.state !== "destroyed")) {
      throw new Error(`Sandbox with name ${params.name} already exists`);
    }
    const from = "snapshot" in params && params.snapshot !== undefined ? params.snapshot : undefined;
    const saved = from === undefined ? undefined : this.snapshots.get(from);
    // The snapshots a session makes are its own; any other name stands for one of the user's (not modelled).
    if (from?.startsWith("shellwright-") === true && saved === undefined) throw new Error(`Snapshot ${from} not found`);
    return this.add(params, saved?.files?.copy());
  }

  /** A new started sandbox, with `files` as its /tmp when given. */
  async add(params: CreateParams, files: PrivateTmp | undefined): Promise<FakeDaytonaSandbox> {
    if (this.failCreate) throw this.failCreate;
    const box = this.options.initlessBox === true ? await InitlessBox.start() : undefined;
    const own = files ?? (this.options.privateTmp === true ? PrivateTmp.fresh() : undefined);
    const sandbox = new FakeDaytonaSandbox(this.sandboxes.length + 1, params, box, this, own);
    this.sandboxes.push(sandbox);
    return sandbox;
  }

  async get(idOrName: string): Promise<FakeDaytonaSandbox> {
    this.calls.push(`get ${idOrName}`);
    const found = this.sandboxes.find((s) => (s.id === idOrName || s.name === idOrName) && s.state !== "destroyed");
    if (!found) throw new Error(`Sandbox with ID or name ${idOrName} not found`);
    return found;
  }

  async *list(query: DaytonaSdk.ListSandboxesQuery = {}): AsyncIterableIterator<FakeDaytonaSandbox> {
    this.calls.push(`list ${JSON.stringify(query.labels ?? {})}`);
    for (const sandbox of this.sandboxes) {
      if (sandbox.state === "destroyed") continue;
      if (Object.entries(query.labels ?? {}).every(([key, value]) => sandbox.labels[key] === value)) yield sandbox;
    }
  }

  get last(): FakeDaytonaSandbox {
    const sandbox = this.sandboxes.at(-1);
    if (!sandbox) throw new Error("no sandbox was created");
    return sandbox;
  }
}
