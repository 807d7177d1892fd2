/**
 * What follows a background process's output as it arrives, chosen at its start: the two streams apart as bytes
 * (split-stream.ts) for `separateStreams`, else the merged text (output-stream.ts) for a PTY's emulator or an
 * `onOutput` listener; nothing (no follower, no channel) when nobody listens.
 */

import type { Environment } from "../../core/environment.js";
import type { BackgroundProcess, PtySize } from "./background-process.js";
import { OutputStream } from "./output-stream.js";
import { SplitOutputStream } from "./split-stream.js";

export interface OutputListeners {
  /** The output as text, stdout and stderr merged (a PTY's with its escapes). */
  onOutput?: ((text: string) => void) | undefined;
  /** With `separateStreams`: each stream's exact bytes, in order. */
  onStdout?: ((bytes: Uint8Array) => void) | undefined;
  onStderr?: ((bytes: Uint8Array) => void) | undefined;
  /** With `separateStreams`: every byte of both streams was delivered (or the streams were stopped). */
  onStreamsEnd?: (() => void) | undefined;
}

/** What ProcessRegistry.spawn takes beside the command. */
export interface ProcessSpawnOptions extends OutputListeners {
  cwd?: string;
  notifyOnComplete?: boolean;
  pty?: PtySize;
  /** Stderr kept apart (`err`): onStdout and onStderr get each stream; not with `pty`. */
  separateStreams?: boolean;
  /** Variables exported to the command (process-signal.ts checks them); their values never on a command line. */
  env?: Readonly<Record<string, string>>;
}

/** Starts the process's stream when anything listens (sets `process.stream`); its `started`, or undefined. */
export function startOutputStream(
  session: Environment,
  process: BackgroundProcess,
  separateStreams: boolean,
  listeners: OutputListeners,
): Promise<void> | undefined {
  if (separateStreams) {
    const { onStdout, onStderr, onStreamsEnd } = listeners;
    if (onStdout === undefined && onStderr === undefined) {
      onStreamsEnd?.();
      return undefined;
    }
    const sinks = { stdout: onStdout ?? (() => undefined), stderr: onStderr ?? (() => undefined) };
    const stream = new SplitOutputStream(session, process, sinks, () => onStreamsEnd?.());
    process.stream = stream;
    return stream.started;
  }
  const terminal = process.pty?.terminal;
  const listener = listeners.onOutput;
  if (terminal === undefined && listener === undefined) return undefined;
  const stream = new OutputStream(
    session,
    process,
    (text) => (terminal?.feed(text), listener?.(text)),
    () => terminal?.end(),
  );
  process.stream = stream;
  return stream.started;
}
