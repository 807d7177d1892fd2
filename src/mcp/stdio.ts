/**
 * Serves the MCP server on this process's stdin and stdout until the client
 * goes away (stdin ends) or the process is asked to stop; then the session is
 * closed, so no command outlives the server.
 */

import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpServer, type McpServerOptions } from "./server.js";

export interface StdioOptions {
  /** @default process.stdin */
  input?: NodeJS.ReadableStream;
  /** @default process.stdout */
  output?: NodeJS.WritableStream;
}

/** Resolves when the connection has ended and the session is closed. */
export async function serveStdio(options: McpServerOptions & StdioOptions): Promise<void> {
  const { input = process.stdin, output = process.stdout, ...serverOptions } = options;
  const mcp = createMcpServer(serverOptions);
  const stop = (): void => void mcp.close();
  input.once("end", stop);
  input.once("close", stop);
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  try {
    await mcp.connect(
      new StdioServerTransport(
        input as NodeJS.ReadStream & typeof process.stdin,
        output as NodeJS.WriteStream & typeof process.stdout,
      ),
    );
    await mcp.closed;
  } finally {
    input.off("end", stop);
    input.off("close", stop);
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
  }
}
