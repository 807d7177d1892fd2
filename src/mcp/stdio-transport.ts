/**
 * The MCP stdio transport (one JSON-RPC message per line), with a limit on a
 * message that ends that message, not the connection. The SDK's own stdio
 * transport closes when a line passes its 10 MiB buffer, so one large tool
 * call (a `write_file` of 12 MB) ended the server and every session its host
 * had. Here an over-size line is dropped as it arrives (line-splitter.ts),
 * answered with a JSON-RPC error naming the limit and how to raise it (with
 * the request's id when its edges show it), and the next line is read as
 * usual. A line that is not JSON, or not a JSON-RPC message, is answered with
 * the matching JSON-RPC error too, and the connection goes on.
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  JSONRPCMessageSchema,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { LineSplitter, type OversizeLine } from "./line-splitter.js";
import { recoverRequestId } from "./request-id.js";

export interface StdioTransportOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Largest message (one line, in bytes) read from the client. */
  maxMessageBytes: number;
}

/** The SDK's own limit, so what a host could send before still goes through. */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** A message is decoded into one string, and V8's longest string is about 512 MiB. */
export const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #input: NodeJS.ReadableStream;
  readonly #output: NodeJS.WritableStream;
  readonly #maxMessageBytes: number;
  readonly #lines: LineSplitter;
  #started = false;
  #closed = false;

  constructor(options: StdioTransportOptions) {
    this.#input = options.input;
    this.#output = options.output;
    this.#maxMessageBytes = options.maxMessageBytes;
    this.#lines = new LineSplitter(
      options.maxMessageBytes,
      (line) => this.#onLine(line),
      (line) => this.#onOversize(line),
    );
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error("The stdio transport is already started");
    this.#started = true;
    this.#input.on("data", this.#onData);
    this.#input.on("error", this.#onInputError);
    this.#output.on("error", this.#onOutputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#closed) return reject(new Error("The stdio transport is closed"));
      if (this.#output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#output.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#input.off("data", this.#onData);
    this.#input.off("error", this.#onInputError);
    this.#output.off("error", this.#onOutputError);
    if (this.#input.listenerCount("data") === 0) this.#input.pause();
    this.#lines.reset();
    this.onclose?.();
  }

  readonly #onData = (chunk: Buffer | string): void => {
    this.#lines.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  };

  readonly #onInputError = (error: Error): void => this.onerror?.(error);

  /** Nobody reads our answers any more (the client is gone): stop, as at the end of input. */
  readonly #onOutputError = (error: Error): void => {
    this.onerror?.(error);
    void this.close();
  };

  #onLine(line: Buffer): void {
    const text = line.toString("utf8").replace(/\r$/, "");
    if (text.trim() === "") return;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return this.#answerError(null, ErrorCode.ParseError, "Parse error: the message is not valid JSON");
    }
    const parsed = JSONRPCMessageSchema.safeParse(json);
    if (!parsed.success) {
      return this.#answerError(
        idOf(json),
        ErrorCode.InvalidRequest,
        "Invalid request: the message is not a JSON-RPC 2.0 request, notification or response",
      );
    }
    this.onmessage?.(parsed.data);
  }

  #onOversize(line: OversizeLine): void {
    const limit = this.#maxMessageBytes;
    this.#answerError(
      recoverRequestId(line.head, line.tail),
      ErrorCode.InvalidRequest,
      `Message too large: ${line.bytes} bytes, over this server's limit of ${limit} bytes per message; ` +
        "it was dropped unread. Send less in one call (write a large file in parts), or raise the limit " +
        "(shellwright mcp --max-message-bytes N; serveStdio's maxMessageBytes).",
      { messageBytes: line.bytes, maxMessageBytes: limit },
    );
  }

  #answerError(id: RequestId | null, code: number, message: string, data?: Record<string, unknown>): void {
    const error = { code, message, ...(data === undefined ? {} : { data }) };
    // JSON-RPC answers a request whose id cannot be known with id null; the SDK's type has no null id.
    const answer = { jsonrpc: "2.0", id, error } as unknown as JSONRPCMessage;
    this.send(answer).catch((failure: unknown) => this.onerror?.(failure as Error));
    this.onerror?.(new Error(message));
  }
}

function idOf(json: unknown): RequestId | null {
  if (typeof json !== "object" || json === null) return null;
  const id = (json as { id?: unknown }).id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}
