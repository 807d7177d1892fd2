/**
 * A streaming execution's events on the client side (the gateway backend):
 * reading the NDJSON events, and what was streamed, kept bounded (merged, or
 * stdout and stderr apart in one budget, as the server's session keeps it)
 * for when the answer itself is lost after an interrupt.
 */

import { StringDecoder } from "node:string_decoder";
import type { IncomingMessage } from "node:http";
import type { ExecuteResult } from "../../core/environment.js";
import { OutputCollector } from "../../core/output.js";
import { StreamsCollector, type StreamName } from "../../core/stream-output.js";
import { connectionLost, gatewayError } from "./client-errors.js";
import type { ExecutionResult, StreamEvent } from "../../http/gateway-protocol.js";

/** Reads NDJSON events, passing output on (with its stream, when apart), until the result (or an error) arrives. */
export async function readStream(
  response: IncomingMessage,
  url: URL,
  onOutput: (text: string, stream: StreamName | undefined) => void,
): Promise<ExecutionResult> {
  const decoder = new StringDecoder("utf8");
  let pending = "";
  let last: StreamEvent | undefined;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      pending += decoder.write(chunk);
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const event = JSON.parse(pending.slice(0, newline)) as StreamEvent;
        pending = pending.slice(newline + 1);
        if (event.type === "output") onOutput(event.text, event.stream);
        else last = event;
      }
    }
  } catch (error) {
    throw connectionLost(error, url);
  }
  if (last?.type === "result") return last.result;
  if (last?.type === "error") throw gatewayError(500, last.error, url);
  throw connectionLost(undefined, url);
}

interface Listeners {
  onOutput?: ((text: string) => void) | undefined;
  separateStreams: boolean;
  onStdout?: ((text: string) => void) | undefined;
  onStderr?: ((text: string) => void) | undefined;
}

/** The output events of one execution: to the caller's listeners, and kept within the session's bounds. */
export class StreamedOutput {
  readonly #listeners: Listeners;
  readonly #merged: OutputCollector | undefined;
  readonly #apart: StreamsCollector | undefined;

  constructor(bounds: { maxOutputBytes: number; outputHeadFraction: number }, listeners: Listeners) {
    this.#listeners = listeners;
    if (listeners.separateStreams) this.#apart = new StreamsCollector(bounds.maxOutputBytes, bounds.outputHeadFraction);
    else this.#merged = new OutputCollector(bounds.maxOutputBytes, bounds.outputHeadFraction);
  }

  /** Whether the execution should stream its output at all. */
  get wanted(): boolean {
    const l = this.#listeners;
    return l.onOutput !== undefined || l.onStdout !== undefined || l.onStderr !== undefined;
  }

  push(text: string, stream: StreamName | undefined): void {
    const bytes = Buffer.from(text);
    if (this.#apart !== undefined) this.#apart.push(stream ?? "stdout", bytes);
    else this.#merged!.push(bytes);
    this.#listeners.onOutput?.(text);
    if (stream === "stdout") this.#listeners.onStdout?.(text);
    if (stream === "stderr") this.#listeners.onStderr?.(text);
  }

  /** An interrupted execution's result from what was streamed (the answer was lost). */
  interrupted(): Omit<ExecuteResult, "cwd" | "durationMs"> {
    const apart = this.#apart?.finish();
    const { text, truncated } = apart?.output ?? this.#merged!.finish();
    return {
      output: text === "" ? "[Command interrupted]" : `${text}\n[Command interrupted]`,
      exitCode: 130,
      timedOut: false,
      interrupted: true,
      truncated,
      ...(apart === undefined ? {} : { stdout: apart.stdout.text, stderr: apart.stderr.text }),
    };
  }
}
