/** Shared by the MCP tests: a client connected to a server process over real stdio, and reading a tool call's result. */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll } from "vitest";
import { useScratchDir } from "../helpers/scratch.js";
import { opened } from "../helpers/session.js";

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

/**
 * `shellwright mcp` on the local backend for a describe block, its cwd a scratch directory of its own: started
 * before the block's tests, its client closed after them.
 */
export function useLocalMcpCli(prefix: string): { readonly client: Client; readonly scratch: string } {
  const scratch = useScratchDir(prefix);
  let client: Client | undefined;
  beforeAll(async () => {
    ({ client } = await connect("run-mcp-cli.mjs", ["--backend", "local", "--cwd", scratch.path]));
  });
  afterAll(async () => {
    await client?.close();
  });
  return {
    get client(): Client {
      return opened(client, "the MCP client");
    },
    get scratch(): string {
      return scratch.path;
    },
  };
}

/** What `shellwright mcp` with `args` says when it refuses them: its exit status and stderr. */
export function usageFailure(args: string[]): { status: number; stderr: string } | undefined {
  try {
    execFileSync(process.execPath, [fixture("run-mcp-cli.mjs"), ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (error) {
    return error as { status: number; stderr: string };
  }
  return undefined;
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
