/**
 * The Shellwright MCP server: the tools of one shell session, served to one
 * client connection with the official MCP SDK.
 *
 * The session opens at the first tool call (listing tools needs no backend)
 * and closes with the connection. A tool's failure is a result with
 * `isError: true` the model can read; only a call to a tool that does not
 * exist is a protocol error, as the MCP specification asks. Output streams to
 * the client as progress notifications when it sent a progress token, and a
 * cancelled call interrupts its command (exit code 130) and leaves the session
 * usable.
 */

import { readFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport as McpTransport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { InvalidOptionError } from "../core/errors.js";
import { describe, plainObject, positiveNumber, rejectUnknown } from "../core/options.js";
import { objectSchema, withoutDialect } from "../agents/definitions.js";
import type { Environment } from "../core/environment.js";
import { toolList } from "../agents/tool-list.js";
import { callTool, findTool, unknownToolMessage } from "../tools/registry.js";
import { toolSettings, type ToolSettingsInput } from "../tools/shared/tool-settings.js";
import type { ToolDefinition, ToolResult } from "../tools/shared/tool-definition.js";
import { ProgressReporter } from "./progress.js";

export interface McpServerOptions {
  /** Opens the session the tools run in; called at the first tool call, again only if it failed. */
  createSession: () => Promise<Environment>;
  /** @default the Shellwright tools */
  tools?: readonly ToolDefinition[];
  /** Shown to the client (and often to the model) as the server's instructions. */
  instructions?: string;
  /** Least time between two progress notifications of one call. @default 250 */
  progressIntervalMs?: number;
  /** Limits and hooks for the tools (output limits, the approval hook, result persistence). @default DEFAULT_TOOL_SETTINGS */
  settings?: ToolSettingsInput;
}

export interface ShellwrightMcpServer {
  /** The MCP SDK server, for a caller that wants to add to it before connecting. */
  readonly server: Server;
  connect(transport: McpTransport): Promise<void>;
  /** Ends the connection and closes the session (interrupting running commands). */
  close(): Promise<void>;
  /** Resolves when the connection has ended and the session is closed. */
  readonly closed: Promise<void>;
}

const DEFAULT_INSTRUCTIONS =
  "Shellwright gives you one persistent bash session: the working directory and exported variables carry over from one tool call to the next.";

export function createMcpServer(options: McpServerOptions): ShellwrightMcpServer {
  const raw = plainObject("options", options);
  rejectUnknown("createMcpServer", raw, ["createSession", "tools", "instructions", "progressIntervalMs", "settings"]);
  if (typeof options.createSession !== "function") {
    throw new InvalidOptionError(
      "createSession",
      `createSession must be a function that opens a Session, got ${describe(options.createSession)}`,
    );
  }
  const tools = toolList(options.tools);
  const listing = tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: withoutDialect(objectSchema(tool)) as { type: "object"; [key: string]: unknown },
  }));
  const progressIntervalMs = positiveNumber("progressIntervalMs", options.progressIntervalMs, 250);
  const settings = toolSettings(options.settings);

  const server = new Server(
    { name: "shellwright", version: packageVersion() },
    { capabilities: { tools: { listChanged: false } }, instructions: options.instructions ?? DEFAULT_INSTRUCTIONS },
  );

  let opening: Promise<Environment> | undefined;
  const session = (): Promise<Environment> => {
    opening ??= options.createSession().catch((error: unknown) => {
      opening = undefined;
      throw error;
    });
    return opening;
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = findTool(request.params.name, tools);
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, unknownToolMessage(request.params.name, tools));
    let shell: Environment;
    try {
      shell = await session();
    } catch (error) {
      return toCallToolResult({
        error: `The shell session could not be opened: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
    const token = request.params._meta?.progressToken;
    const reporter =
      token === undefined
        ? undefined
        : new ProgressReporter((update) => {
            extra
              .sendNotification({ method: "notifications/progress", params: { progressToken: token, ...update } })
              .catch(() => undefined);
          }, progressIntervalMs);
    try {
      const result = await callTool(tool, request.params.arguments ?? {}, {
        session: shell,
        signal: extra.signal,
        settings,
        ...(reporter === undefined ? {} : { onOutput: (text: string) => reporter.report(text) }),
      });
      return toCallToolResult(result);
    } finally {
      reporter?.stop();
    }
  });

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const closeSession = (): Promise<void> => {
    closing ??= (async () => {
      const open = opening;
      opening = Promise.reject(new Error("the MCP connection has ended"));
      opening.catch(() => undefined);
      if (open !== undefined) await open.then((s) => s.close()).catch(() => undefined);
      resolveClosed();
    })();
    return closing;
  };
  server.onclose = () => void closeSession();

  return {
    server,
    connect: (transport) => server.connect(transport),
    close: async () => {
      await server.close();
      await closeSession();
    },
    closed,
  };
}

/** The result a model reads: the tool's JSON as text, the same object as structured content. */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const content: CallToolResult["content"] = [{ type: "text", text: JSON.stringify(result) }];
  return { content, structuredContent: result, isError: typeof result.error === "string" };
}

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version?: unknown;
    };
    return typeof pkg.version === "string" ? pkg.version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}
