/**
 * Serves the MCP server on this process's stdin and stdout until the client
 * goes away (stdin ends) or the process is asked to stop; then the session is
 * closed, so no command outlives the server.
 */

import { InvalidOptionError } from "../core/errors.js";
import { positiveInteger } from "../core/options.js";
import { createMcpServer, type McpServerOptions } from "./server.js";
import { DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES, StdioTransport } from "./stdio-transport.js";

export interface StdioOptions {
  /** @default process.stdin */
  input?: NodeJS.ReadableStream;
  /** @default process.stdout */
  output?: NodeJS.WritableStream;
  /**
   * Largest message (one line) read from the client, in bytes. A larger one is
   * answered with a JSON-RPC error and dropped; the connection goes on.
   * At most 256 MiB. @default 10 MiB
   */
  maxMessageBytes?: number;
}

/** Resolves when the connection has ended and the session is closed. */
export async function serveStdio(options: McpServerOptions & StdioOptions): Promise<void> {
  const { input = process.stdin, output = process.stdout, maxMessageBytes: rawMax, ...serverOptions } = options;
  const maxMessageBytes = positiveInteger("maxMessageBytes", rawMax, DEFAULT_MAX_MESSAGE_BYTES);
  if (maxMessageBytes > MAX_MESSAGE_BYTES)
    throw new InvalidOptionError(
      "maxMessageBytes",
      `maxMessageBytes must be at most ${MAX_MESSAGE_BYTES} (256 MiB), got ${maxMessageBytes}`,
    );
  const mcp = createMcpServer(serverOptions);
  const stop = (): void => void mcp.close();
  input.once("end", stop);
  input.once("close", stop);
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  try {
    await mcp.connect(new StdioTransport({ input, output, maxMessageBytes }));
    await mcp.closed;
  } finally {
    input.off("end", stop);
    input.off("close", stop);
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
  }
}
