/** Shared by the MCP tests: a client connected to a server process over real stdio, and reading a tool call's result. */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export const fixture = (name: string): string => new URL(`../fixtures/${name}`, import.meta.url).pathname;

export async function connect(
  script: string,
  args: string[] = [],
): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [fixture(script), ...args],
    stderr: "pipe",
  });
  const client = new Client({ name: "shellwright-test", version: "0.0.0" });
  await client.connect(transport);
  return { client, transport };
}

export const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

export const textOf = (result: CallToolResult): string => (result.content[0] as { type: "text"; text: string }).text;
