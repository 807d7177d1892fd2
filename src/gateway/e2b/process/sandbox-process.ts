/**
 * One process of an E2B sandbox as envd's process service shows it: a pid,
 * its config and tag, and its events (data, then one end) fanned out to
 * every stream watching it (the Start that began it, Connects after). A
 * stream joining late gets what happens from then on, as envd does.
 *
 * The gateway's token is masked here, before the fan-out, as Shellwright's
 * own API masks it: one masker per output kind (a token cut between two
 * chunks of stdout is still caught) and the end's error.
 */

import type { TokenMask } from "../../token-mask.js";

const ENCODER = new TextEncoder();

export type OutputKind = "stdout" | "stderr" | "pty";

export interface EndInfo {
  /** The exit code; -1 when a signal ended it (Go's ProcessState.ExitCode, which envd sends). */
  exitCode: number;
  exited: boolean;
  /** As envd words it (Go's ProcessState.String): "exit status 1", "signal: killed". */
  status: string;
  error?: string;
}

export type ProcessUpdate = { kind: "data"; output: OutputKind; data: Uint8Array } | { kind: "end"; end: EndInfo };

export interface ProcessConfigView {
  cmd: string;
  args: string[];
  envs: Record<string, string>;
  cwd?: string;
}

export type Signal = "SIGTERM" | "SIGKILL";

/** How a process is really run and acted on: execute for a plain one, the process registry for PTYs and stdin. */
export interface ProcessDriver {
  signal(signal: Signal): Promise<void>;
  /** Bytes to its stdin (its terminal under a PTY); false when it has no open stdin. */
  write(data: Uint8Array): Promise<boolean>;
  closeStdin(): Promise<boolean>;
  /** False when it has no PTY. */
  resize(size: { cols: number; rows: number }): Promise<boolean>;
}

export class SandboxProcess {
  readonly pid: number;
  readonly tag: string | undefined;
  readonly config: ProcessConfigView;
  readonly pty: boolean;
  /** Set once the driver runs it. */
  driver: ProcessDriver | undefined;
  #end: EndInfo | undefined;
  /** The signal asked for last: an interrupted run is reported as that signal's end. */
  requestedSignal: Signal | undefined;
  readonly #listeners = new Set<(update: ProcessUpdate) => void>();
  readonly #mask: TokenMask | undefined;
  readonly #maskers = new Map<OutputKind, ReturnType<TokenMask["stream"]>>();

  constructor(
    pid: number,
    tag: string | undefined,
    config: ProcessConfigView,
    pty: boolean,
    mask: TokenMask | undefined,
  ) {
    this.pid = pid;
    this.tag = tag;
    this.config = config;
    this.pty = pty;
    this.#mask = mask;
  }

  get ended(): EndInfo | undefined {
    return this.#end;
  }

  /** Text the process wrote (decoded by its driver), masked and sent as UTF-8. */
  output(kind: OutputKind, text: string): void {
    if (this.#end !== undefined || text === "") return;
    let masker = this.#maskers.get(kind);
    if (masker === undefined && this.#mask !== undefined) {
      masker = this.#mask.stream();
      this.#maskers.set(kind, masker);
    }
    this.#send(kind, masker === undefined ? text : masker.push(text));
  }

  #send(kind: OutputKind, text: string): void {
    if (text === "") return;
    const data = ENCODER.encode(text);
    for (const listener of this.#listeners) listener({ kind: "data", output: kind, data });
  }

  finish(info: EndInfo): void {
    if (this.#end !== undefined) return;
    // What a masker still holds (a start of the token that never finished) goes out before the end.
    for (const [kind, masker] of this.#maskers) this.#send(kind, masker.end());
    const end =
      info.error === undefined || this.#mask === undefined ? info : { ...info, error: this.#mask.mask(info.error) };
    this.#end = end;
    for (const listener of this.#listeners) listener({ kind: "end", end });
    this.#listeners.clear();
  }

  /** Calls `listener` with each update from now on; returns the function that stops it. */
  watch(listener: (update: ProcessUpdate) => void): () => void {
    if (this.#end !== undefined) {
      listener({ kind: "end", end: this.#end });
      return () => undefined;
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** The end of a run killed by `signal`, as envd reports it. */
export function signalEnd(signal: Signal): EndInfo {
  const status = signal === "SIGKILL" ? "signal: killed" : "signal: terminated";
  return { exitCode: -1, exited: false, status, error: status };
}

/** The end of a run that exited with `code`, as envd reports it. */
export function exitEnd(code: number): EndInfo {
  const status = `exit status ${code}`;
  return code === 0 ? { exitCode: 0, exited: true, status } : { exitCode: code, exited: true, status, error: status };
}
