/**
 * `mcp --http` (src/mcp/http.ts) against requests built to break it: a body
 * that claims 2 GB and never comes must get its 413 at once, and a bounded
 * fuzz of bad targets and headers must never get a 5xx.
 */

import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment } from "../../src/index.js";
import { serveHttp, type HttpMcpServer } from "../../src/mcp/http.js";
import { hostileHeaderSets, hostileTargets, rawExchange } from "../helpers/raw-http.js";

const token = randomBytes(24).toString("hex");

describe("mcp --http under hostile requests", () => {
  let server: HttpMcpServer;
  let port: number;
  let host: string;
  beforeAll(async () => {
    server = await serveHttp({ createSession: () => createEnvironment(), token, maxSessions: 2 });
    port = Number(new URL(server.url).port);
    host = `127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await server.close();
  });

  it("answers a 2 GB Content-Length claim with 413 at once and closes, without reading a body", async () => {
    // Only the headers are sent: a server that waited for the body would never answer.
    const answer = await rawExchange(
      port,
      `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 2147483648\r\n\r\n`,
    );
    expect(answer.status).toBe(413);
    expect(answer.text).toMatch(/\r\nconnection: close\r\n/i);
  });

  it("answers the same claim without the token with 401, also at once", async () => {
    const answer = await rawExchange(
      port,
      `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 2147483648\r\n\r\n`,
    );
    expect(answer.status).toBe(401);
  });

  it("gives no 5xx to a bounded fuzz of targets and headers, with or without the token", async () => {
    const answers: { request: string; status: number }[] = [];
    const targets = [...hostileTargets("/mcp", 80, 7), "/mcp%", "/mcp/%E0%A4%A", "/%E0%A4%A"];
    for (const target of targets) {
      for (const headers of [[`Host: ${host}`], [`Host: ${host}`, `Authorization: Bearer ${token}`]]) {
        const request = `GET ${target} HTTP/1.1\r\n${[...headers, "Connection: close"].join("\r\n")}\r\n\r\n`;
        answers.push({ request: target, status: (await rawExchange(port, request)).status });
      }
    }
    for (const headers of hostileHeaderSets(host, token)) {
      for (const method of ["GET", "POST", "DELETE"]) {
        const body = method === "POST" ? "{not json" : "";
        const framing =
          method === "POST" && !headers.some((h) => /^(content-length|transfer-encoding):/i.test(h))
            ? [`Content-Length: ${body.length}`]
            : [];
        const request = `${method} /mcp HTTP/1.1\r\n${[...headers, ...framing, "Connection: close"].join("\r\n")}\r\n\r\n${body}`;
        answers.push({
          request: `${method} ${headers.join(" | ").slice(0, 80)}`,
          status: (await rawExchange(port, request)).status,
        });
      }
    }
    expect(answers.filter((answer) => answer.status >= 500)).toEqual([]);
  });
});
