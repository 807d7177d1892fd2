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

/** Collects the JSON lines a server writes (its answers), next to whatever client reads the same stream. */
export function answersOn(stream: NodeJS.ReadableStream): { answers: Record<string, unknown>[] } {
  const answers: Record<string, unknown>[] = [];
  let pending = "";
  stream.on("data", (chunk: Buffer | string) => {
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) if (line.trim() !== "") answers.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { answers };
}

/** Writes `bytes` of `fill` and then a newline to `stream`, in 1 MiB writes that wait for the pipe to drain. */
export async function writeLongLine(stream: NodeJS.WritableStream, bytes: number, fill = "x"): Promise<void> {
  const piece = Buffer.alloc(1024 * 1024, fill);
  for (let left = bytes; left > 0; left -= piece.length) {
    if (!stream.write(left >= piece.length ? piece : piece.subarray(0, left)))
      await new Promise((resolve) => stream.once("drain", resolve));
  }
  stream.write("\n");
}
