/**
 * The MCP server on the streamable HTTP transport: one session per client
 * connection (per MCP session id), each with its own Shellwright session.
 *
 * The gateway's rules, from the same src/http code: a bearer token is
 * required (compared in constant time) unless the caller says
 * `insecureNoAuth` on a loopback address; the default bind is 127.0.0.1; the
 * Host header must name the server (DNS rebinding); request bodies are
 * limited (413), bad JSON is a 400, and a new session beyond `maxSessions` is
 * a 429. A session ends when its client sends DELETE
 * or the server closes; its running commands end with it.
 */

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { InvalidOptionError } from "../core/errors.js";
import { jsonSyntaxProblem } from "../core/json-error.js";
import { describe, positiveInteger } from "../core/options.js";
import { checkTokenOption, TokenCheck } from "../http/bearer-token.js";
import { readBody, TOO_LARGE } from "../http/body-limit.js";
import { hostHeaderCheck } from "../http/host-header.js";
import { canonicalHost, isLoopbackHost, urlHost } from "../http/loopback.js";
import { createMcpServer, type McpServerOptions, type ShellwrightMcpServer } from "./server.js";

export interface HttpServeOptions extends McpServerOptions {
  /** @default "127.0.0.1" */
  host?: string;
  /** 0 picks a free port. @default 0 */
  port?: number;
  /** The bearer token clients must send. Required unless insecureNoAuth. */
  token?: string;
  /** Serve without a token; refused unless the host is a loopback address. @default false */
  insecureNoAuth?: boolean;
  /** Open client sessions at most; one more is answered 429. @default 16 */
  maxSessions?: number;
  /** Largest request body. @default 4 MiB */
  maxBodyBytes?: number;
}

export interface HttpMcpServer {
  /** The endpoint, e.g. http://127.0.0.1:8123/mcp */
  readonly url: string;
  /** Client sessions open now. */
  readonly sessions: number;
  /** Ends every client session (closing their Shellwright sessions) and stops listening. */
  close(): Promise<void>;
}

export async function serveHttp(options: HttpServeOptions): Promise<HttpMcpServer> {
  const {
    host = "127.0.0.1",
    port = 0,
    token,
    insecureNoAuth = false,
    maxSessions: rawMax,
    maxBodyBytes: rawBody,
    ...serverOptions
  } = options;
  const maxSessions = positiveInteger("maxSessions", rawMax, 16);
  const maxBodyBytes = positiveInteger("maxBodyBytes", rawBody, 4 * 1024 * 1024);
  if (typeof host !== "string" || host === "")
    throw new InvalidOptionError("host", `host must be an address to bind, got ${describe(host)}`);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new InvalidOptionError("port", `port must be an integer from 0 to 65535, got ${describe(port)}`);
  if (token === undefined) {
    if (!insecureNoAuth)
      throw new InvalidOptionError(
        "token",
        "token is required: clients must send it as a bearer token (or pass insecureNoAuth on a loopback host)",
      );
    if (!isLoopbackHost(host))
      throw new InvalidOptionError(
        "insecureNoAuth",
        `insecureNoAuth is allowed only on a loopback host, not ${describe(host)}`,
      );
  }
  const check = token === undefined ? undefined : new TokenCheck(checkTokenOption("token", token));
  const authorized = (request: IncomingMessage): boolean =>
    check === undefined || check.matches(request.headers.authorization);
  const hostAllowed = hostHeaderCheck(host);

  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; mcp: ShellwrightMcpServer }>();
  let pending = 0;

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    if (requestPath(request.url) !== "/mcp") return reply(response, 404, "Not found: the MCP endpoint is /mcp");
    if (!authorized(request)) {
      response.setHeader("WWW-Authenticate", 'Bearer realm="shellwright"');
      return reply(response, 401, "Missing or wrong bearer token");
    }
    if (!hostAllowed(request.headers.host))
      return reply(response, 403, `Host ${describe(request.headers.host)} is not this server`);

    let body: unknown;
    if (request.method === "POST") {
      const read = await readBody(request, maxBodyBytes);
      if (read === TOO_LARGE) {
        // The rest of the body is not read; the connection cannot carry another request.
        response.setHeader("Connection", "close");
        return reply(
          response,
          413,
          `Request body over ${maxBodyBytes} bytes (maxBodyBytes; shellwright mcp --http --max-message-bytes N raises it)`,
        );
      }
      const text = read.toString("utf8");
      try {
        body = JSON.parse(text);
      } catch (error) {
        return reply(response, 400, `Request body is not JSON: ${jsonSyntaxProblem(error, text)}`);
      }
    }
    const id = request.headers["mcp-session-id"];
    if (typeof id === "string") {
      const open = sessions.get(id);
      if (open === undefined) return reply(response, 404, "Session not found; initialize a new one");
      return open.transport.handleRequest(request, response, body);
    }
    if (request.method !== "POST" || !isInitializeRequest(body))
      return reply(response, 400, "No mcp-session-id: send an initialize request first");
    if (sessions.size + pending >= maxSessions)
      return reply(response, 429, `Too many sessions (at most ${maxSessions}); close one first`);

    pending++;
    let initialized = false;
    const mcp = createMcpServer(serverOptions);
    try {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => {
          initialized = true;
          sessions.set(sessionId, { transport, mcp });
          void mcp.closed.then(() => sessions.delete(sessionId));
        },
      });
      await mcp.connect(transport);
      await transport.handleRequest(request, response, body);
    } finally {
      pending--;
      if (!initialized) await mcp.close();
    }
  };

  const http = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        reply(response, 500, `Internal error: ${error instanceof Error ? error.message : String(error)}`);
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, canonicalHost(host), () => resolve());
  });
  const bound = (http.address() as AddressInfo).port;

  return {
    url: `http://${urlHost(host)}:${bound}/mcp`,
    get sessions() {
      return sessions.size;
    },
    close: async () => {
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      await Promise.all([...sessions.values()].map(({ mcp }) => mcp.close()));
      http.closeAllConnections();
      await stopped;
    },
  };
}

/** The path of a request target; undefined for one no URL can hold (`//[`), which is then no route at all. */
function requestPath(target: string | undefined): string | undefined {
  try {
    return new URL(target ?? "/", "http://x").pathname;
  } catch {
    return undefined;
  }
}

function reply(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { "Content-Type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}
