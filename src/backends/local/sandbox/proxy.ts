/**
 * The domain allowlist: an HTTP proxy on the host that the sandbox reaches
 * through a unix socket (the sandbox has no other way out of its network
 * namespace). It serves CONNECT (HTTPS and any TCP a client tunnels) and plain
 * HTTP requests in absolute form, and only to listed names: `host` allows every
 * port, `host:port` one. It sees host names and ports, never content; names are
 * resolved here, on the host.
 */

import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import type { AllowedName } from "./config.js";

export interface AllowlistProxy {
  readonly socketPath: string;
  close(): Promise<void>;
}

/** True when `host:port` is on the list (names compare case-insensitively, without IPv6 brackets). */
export function isAllowed(allow: readonly AllowedName[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return allow.some((entry) => entry.host.replace(/^\[(.*)\]$/, "$1") === name && (entry.port ?? port) === port);
}

export async function startAllowlistProxy(socketPath: string, allow: readonly AllowedName[]): Promise<AllowlistProxy> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end("shellwright sandbox proxy: only absolute-form requests (http://host/...)\n");
      return;
    }
    const port = Number(target.port || (target.protocol === "https:" ? 443 : 80));
    if (target.protocol !== "http:" || !isAllowed(allow, target.hostname, port)) {
      res.writeHead(403).end(refusal(`${target.hostname}:${port}`));
      return;
    }
    const upstream = httpRequest(
      {
        host: target.hostname.replace(/^\[(.*)\]$/, "$1"),
        port,
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers: withoutHopHeaders(req),
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, withoutHopHeaders(answer));
        answer.pipe(res);
      },
    );
    upstream.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(`shellwright sandbox proxy: ${error.message}\n`);
    });
    req.pipe(upstream);
  });
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(req.url ?? "");
    const port = Number(match?.[2]);
    if (match === null || !isAllowed(allow, match[1]!, port)) {
      client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\n${refusal(req.url ?? "")}`);
      return;
    }
    const upstream = connect(port, match[1]!.replace(/^\[(.*)\]$/, "$1"), () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", () => {
      if (!client.destroyed) client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
    });
    client.on("error", () => upstream.destroy());
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  // The session's sandbox must not keep this process alive on its own.
  server.unref();
  return {
    socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function refusal(target: string): string {
  return `shellwright sandbox: ${target} is not in sandbox.network.allow\n`;
}

const HOP_HEADERS = new Set([
  "proxy-connection",
  "proxy-authorization",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "upgrade",
]);

function withoutHopHeaders(req: IncomingMessage): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined && !HOP_HEADERS.has(key)) out[key] = value;
  }
  return out;
}
