/**
 * One `ssh` client process running one remote command, adapted to
 * ProcessHandle: stdout is the command's output, the channel's stderr carries
 * the outer shell's group and exit-code lines (see ssh-command.ts) and ssh's
 * own messages.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { PassThrough } from "node:stream";
import { constants as osConstants } from "node:os";
import { SpawnError } from "../../core/errors.js";
import type { ProcessHandle } from "../../core/transport.js";
import { EXIT_PATTERN, GROUP_PATTERN } from "./command.js";
import { KeyedStderr } from "./keyed-stderr.js";

/** ssh's own messages are kept up to this size, for error messages. */
const STDERR_LIMIT = 8192;

export interface CallEnd {
  /** The exit code the outer shell reported; undefined when it never did. */
  reported: number | undefined;
  /** The ssh client's own exit code (255: ssh failed, or the remote side died). */
  clientCode: number;
  /** ssh's stderr without our lines. */
  stderr: string;
  /** kill() was called. */
  killed: boolean;
  /** The outer shell started on the host (it reported its group). */
  started: boolean;
}

export interface SshCallOptions {
  sshPath: string;
  /** Resolves to the argv once the call may start (a long script is uploaded first). */
  args: Promise<string[]>;
  stdin: Uint8Array | undefined;
  backend: string;
  /** Learns the remote process group as soon as the outer shell reports it. */
  onGroup(group: number): void;
  /** The outer shell is gone: it reported its exit code, or the client ended. */
  onOuterExit(group: number): void;
  /** Decides the exit code (or throws a typed error) when the call ends without a reported code. */
  settle(end: CallEnd): Promise<number>;
  /** The call keeps stderr apart: its wrapper keys the group and exit lines with this nonce (command.ts). */
  nonce?: string | undefined;
}

export class SshCall implements ProcessHandle {
  readonly output: AsyncIterable<Uint8Array>;
  /** With a nonce: the command's stderr, the keyed lines taken out. */
  readonly stderr: PassThrough | undefined;
  #child: ChildProcess | undefined;
  #killed = false;
  #group: number | undefined;
  #reported: number | undefined;
  #stderr = "";
  #groupWaiters: ((group: number) => void)[] = [];
  readonly #exit: Promise<number>;
  #resolveExit!: (code: number) => void;
  #rejectExit!: (error: unknown) => void;
  readonly #spawned: Promise<ChildProcess | undefined>;

  constructor(options: SshCallOptions) {
    this.#exit = new Promise<number>((resolve, reject) => {
      this.#resolveExit = resolve;
      this.#rejectExit = reject;
    });
    this.#exit.catch(() => undefined); // rejection is delivered through wait()
    this.#spawned = options.args.then(
      (args) => (this.#killed ? undefined : this.#start(options, args)),
      (error: unknown) => {
        this.#rejectExit(error);
        return undefined;
      },
    );
    this.stderr = options.nonce === undefined ? undefined : new PassThrough();
    const spawned = this.#spawned;
    this.output = (async function* () {
      const child = await spawned;
      if (child?.stdout) yield* child.stdout as AsyncIterable<Uint8Array>;
    })();
  }

  /** The remote process group, once reported. */
  get group(): number | undefined {
    return this.#group;
  }

  /** The group, waiting up to `ms` for the outer shell to report it (undefined if the call ends first). */
  groupWithin(ms: number): Promise<number | undefined> {
    if (this.#group !== undefined) return Promise.resolve(this.#group);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.#group), ms);
      this.#groupWaiters.push((group) => {
        clearTimeout(timer);
        resolve(group);
      });
      void this.#exit.then(
        () => resolve(this.#group),
        () => resolve(this.#group),
      );
    });
  }

  wait(): Promise<number> {
    return this.#exit;
  }

  kill(): void {
    this.#killed = true;
    try {
      this.#child?.kill("SIGKILL");
    } catch {
      // already gone
    }
  }

  /** Marks the call as stopped on purpose (its remote tree is being killed). */
  markKilled(): void {
    this.#killed = true;
  }

  #start(options: SshCallOptions, args: string[]): ChildProcess {
    const child = spawn(options.sshPath, args, {
      stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    this.#child = child;
    if (options.stdin !== undefined && child.stdin) {
      child.stdin.on("error", () => undefined); // the command may exit without reading it all
      child.stdin.end(options.stdin);
    }
    let pending = "";
    const apart = this.#keyedStderr(child, options);
    if (apart === undefined) {
      child.stderr!.setEncoding("utf8");
      child.stderr!.on("data", (text: string) => {
        pending += text;
        let newline;
        while ((newline = pending.indexOf("\n")) >= 0) {
          this.#stderrLine(pending.slice(0, newline), options);
          pending = pending.slice(newline + 1);
        }
      });
    }
    child.once("error", (error: NodeJS.ErrnoException) => {
      const hint =
        error.code === "ENOENT"
          ? ` (${options.sshPath} was not found: install the OpenSSH client, e.g. apt-get install openssh-client)`
          : "";
      this.#rejectExit(
        new SpawnError(`Could not run ${options.sshPath}: ${error.message}${hint}`, {
          cause: error,
          backend: options.backend,
        }),
      );
    });
    child.once("close", (code, signal) => {
      if (pending) this.#stderrLine(pending, options);
      apart?.();
      if (this.#group !== undefined && this.#reported === undefined) options.onOuterExit(this.#group);
      if (this.#reported !== undefined) return;
      const clientCode = code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0);
      options
        .settle({
          reported: undefined,
          clientCode,
          stderr: this.#stderr.trim(),
          killed: this.#killed,
          started: this.#group !== undefined,
        })
        .then(this.#resolveExit, this.#rejectExit);
    });
    return child;
  }

  /**
   * A call that keeps stderr apart: the channel's stderr, raw, goes to `stderr` without the keyed lines
   * (keyed-stderr.ts), and its start to the error messages. Returns what ends it when the client closes.
   */
  #keyedStderr(child: ChildProcess, options: SshCallOptions): (() => void) | undefined {
    const stderr = this.stderr;
    if (options.nonce === undefined || stderr === undefined) return undefined;
    const scanner = new KeyedStderr(options.nonce, (kind, value) =>
      kind === "group" ? this.#onGroup(value, options) : this.#onExit(value, options),
    );
    const pass = (bytes: Buffer): void => {
      if (bytes.length === 0) return;
      if (this.#stderr.length < STDERR_LIMIT) this.#stderr += bytes.toString("utf8");
      if (!stderr.writableEnded) stderr.write(bytes);
    };
    child.stderr!.on("data", (chunk: Buffer) => pass(scanner.push(chunk)));
    return () => {
      pass(scanner.flush());
      stderr.end();
    };
  }

  #onGroup(group: number, options: SshCallOptions): void {
    if (this.#group !== undefined) return;
    this.#group = group;
    options.onGroup(group);
    for (const waiter of this.#groupWaiters.splice(0)) waiter(group);
  }

  #stderrLine(line: string, options: SshCallOptions): void {
    const group = GROUP_PATTERN.exec(line);
    if (group && this.#group === undefined) {
      this.#onGroup(Number(group[1]), options);
      return;
    }
    const exit = EXIT_PATTERN.exec(line);
    if (exit && this.#reported === undefined) {
      this.#onExit(Number(exit[1]), options);
      return;
    }
    if (this.#stderr.length < STDERR_LIMIT) this.#stderr += `${line}\n`;
  }

  #onExit(code: number, options: SshCallOptions): void {
    if (this.#reported !== undefined) return;
    this.#reported = code;
    this.#resolveExit(code);
    if (this.#group !== undefined) options.onOuterExit(this.#group);
    // A backgrounded child may keep the channel (and this client) open for hours: let it, without keeping this
    // Node process alive for it. Not at once: the exit line and the command's last output travel apart, and a
    // reader still waiting for stdout's end would be left with nothing to keep the process alive (it exits, 13).
    const child = this.#child;
    if (child) releaseWhenDrained(child);
  }
}

/** After the outer shell's exit: how long the client is still held for its stdout to end. */
const OUTPUT_GRACE_MS = 2_000;

/** Unrefs the client and its pipes once its stdout ended, or after OUTPUT_GRACE_MS. */
function releaseWhenDrained(child: ChildProcess): void {
  const stdout = child.stdout;
  const release = (): void => {
    clearTimeout(timer);
    child.unref();
    for (const stream of [stdout, child.stderr] as unknown as ({ unref?: () => void } | null)[]) stream?.unref?.();
  };
  const timer = setTimeout(release, OUTPUT_GRACE_MS);
  if (stdout === null || stdout.readableEnded || stdout.destroyed) release();
  else stdout.once("close", release).once("end", release);
}
