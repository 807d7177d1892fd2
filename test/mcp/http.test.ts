/**
 * The MCP server on the streamable HTTP transport, over real loopback HTTP,
 * driven by the MCP SDK's own HTTP client.
 */

import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, InvalidOptionError } from "../../src/index.js";
import { serveHttp, type HttpMcpServer } from "../../src/mcp/http.js";
import { testTools } from "../fixtures/agent-tools.mjs";
import { alive, eventually } from "../helpers/processes.js";
import { call } from "./helpers.js";

const token = randomBytes(24).toString("hex");
const createSession = () => createEnvironment();

async function connect(
  url: string,
  bearer = token,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  const client = new Client({ name: "shellwright-http-test", version: "0.0.0" });
  await client.connect(transport);
  return { client, transport };
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};
const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    body,
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
  });

describe("MCP over streamable HTTP", () => {
  let server: HttpMcpServer;
  let scratch: string;
  beforeAll(async () => {
    server = await serveHttp({
      createSession,
      tools: testTools,
      token,
      maxSessions: 3,
      maxBodyBytes: 64 * 1024,
      progressIntervalMs: 50,
    });
    scratch = mkdtempSync(join(tmpdir(), "shellwright-mcp-http-"));
  });
  afterAll(async () => {
    await server.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("binds loopback and serves /mcp", () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it("gives each client its own session", async () => {
    const a = await connect(server.url);
    const b = await connect(server.url);
    try {
      expect((await a.client.listTools()).tools.map((tool) => tool.name)).toEqual(["run", "repeat", "broken"]);
      await call(a.client, "run", { command: "export WHO=alpha" });
      await call(b.client, "run", { command: "export WHO=beta" });
      expect((await call(a.client, "run", { command: "echo $WHO" })).structuredContent).toMatchObject({
        output: "alpha\n",
      });
      expect((await call(b.client, "run", { command: "echo $WHO" })).structuredContent).toMatchObject({
        output: "beta\n",
      });
      expect(server.sessions).toBe(2);
    } finally {
      await a.transport.terminateSession();
      await b.transport.terminateSession();
      await a.client.close();
      await b.client.close();
    }
    await eventually(() => server.sessions === 0, "both sessions to close");
  });

  it("refuses a missing or wrong token with 401, and runs nothing", async () => {
    const marker = join(scratch, "unauthorized");
    const { client, transport } = await connect(server.url);
    try {
      const sessionId = transport.sessionId!;
      const toolCall = JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: "run", arguments: { command: `touch ${marker}` } },
      });
      const versionHeader = { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" };
      for (const headers of [
        versionHeader,
        { ...versionHeader, Authorization: `Bearer ${token}x` },
        { ...versionHeader, Authorization: token },
      ]) {
        const response = await post(server.url, toolCall, headers);
        expect(response.status).toBe(401);
        expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
      }
      expect(existsSync(marker)).toBe(false);
      await expect(connect(server.url, "not-the-token-at-all")).rejects.toThrow(/Missing or wrong bearer token/);
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });

  it("answers a tool call over maxBodyBytes with 413, and the client's session goes on", async () => {
    const { client, transport } = await connect(server.url);
    try {
      await call(client, "run", { command: "export KEPT=yes" });
      const failure = await client
        .callTool({ name: "run", arguments: { command: `: ${"x".repeat(100 * 1024)}` } })
        .catch((error: unknown) => error as Error);
      expect((failure as Error & { code?: number }).code).toBe(413);
      expect((failure as Error).message).toContain("Request body over 65536 bytes (maxBodyBytes");
      expect((await call(client, "run", { command: "echo $KEPT" })).structuredContent).toMatchObject({
        output: "yes\n",
      });
    } finally {
      await transport.terminateSession();
      await client.close();
      await eventually(() => server.sessions === 0, "the session to close");
    }
  });

  it("answers bad requests with a clear status", async () => {
    const auth = { Authorization: `Bearer ${token}` };
    expect((await post(server.url, "{not json", auth)).status).toBe(400);
    expect(
      ((await (await post(server.url, "{not json", auth)).json()) as { error: { message: string } }).error.message,
    ).toMatch(/^Request body is not JSON/);
    expect((await post(server.url, JSON.stringify({ ...initialize, pad: "x".repeat(70_000) }), auth)).status).toBe(413);
    expect((await post(server.url, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }), auth)).status).toBe(
      400,
    );
    expect(
      (await post(server.url, JSON.stringify(initialize), { ...auth, "mcp-session-id": "no-such-session" })).status,
    ).toBe(404);
    expect((await post(server.url.replace("/mcp", "/other"), JSON.stringify(initialize), auth)).status).toBe(404);
    // fetch may not set Host; node:http may, as a DNS-rebinding page's browser would.
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(
        server.url,
        { method: "POST", headers: { ...auth, Host: "evil.example:80", "Content-Type": "application/json" } },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on("error", reject);
      request.end(JSON.stringify(initialize));
    });
    expect(status).toBe(403);
    expect(server.sessions).toBe(0);
  });

  it("answers a session beyond maxSessions with 429", async () => {
    const open = [await connect(server.url), await connect(server.url), await connect(server.url)];
    try {
      const response = await post(server.url, JSON.stringify(initialize), { Authorization: `Bearer ${token}` });
      expect(response.status).toBe(429);
    } finally {
      for (const { client, transport } of open) {
        await transport.terminateSession();
        await client.close();
      }
    }
    await eventually(() => server.sessions === 0, "the sessions to close");
  });

  it("streams progress and turns a cancel into an interrupt", async () => {
    const { client, transport } = await connect(server.url);
    try {
      const updates: Progress[] = [];
      const result = (await client.callTool(
        { name: "run", arguments: { command: "for i in 1 2 3 4; do echo beat $i; sleep 0.2; done" } },
        undefined,
        {
          onprogress: (progress) => updates.push(progress),
        },
      )) as CallToolResult;
      expect(result.structuredContent).toMatchObject({ output: "beat 1\nbeat 2\nbeat 3\nbeat 4\n", exit_code: 0 });
      expect(updates.length).toBeGreaterThan(0);
      for (const update of updates) expect(update.message).toMatch(/^beat [1-4]$/);

      const pidFile = join(scratch, "http-cancel.pid");
      const controller = new AbortController();
      const outcome = await client
        .callTool(
          { name: "run", arguments: { command: `bash -c 'echo $$ > ${pidFile}; echo started; exec sleep 300'` } },
          undefined,
          {
            signal: controller.signal,
            onprogress: (progress) => progress.message === "started" && controller.abort("cancelled over http"),
          },
        )
        .catch((error: unknown) => error);
      expect(String(outcome)).toMatch(/cancelled over http/);
      const pid = Number(readFileSync(pidFile, "utf8"));
      await eventually(() => !alive(pid), `the cancelled command (pid ${pid}) to end`);
      expect((await call(client, "run", { command: "echo ok" })).structuredContent).toMatchObject({ output: "ok\n" });
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });

  it("ends a session's commands when its client ends the session", async () => {
    const { client, transport } = await connect(server.url);
    const result = await call(client, "run", { command: "sleep 300 >/dev/null 2>&1 & echo $!" });
    const pid = Number((result.structuredContent as { output: string }).output.trim());
    expect(alive(pid)).toBe(true);
    await transport.terminateSession();
    await client.close();
    await eventually(() => !alive(pid), `the session's background job (pid ${pid}) to end`);
  });
});

describe("serveHttp options", () => {
  it("wants a token, unless insecureNoAuth on loopback", async () => {
    await expect(serveHttp({ createSession })).rejects.toThrow(
      new InvalidOptionError(
        "token",
        "token is required: clients must send it as a bearer token (or pass insecureNoAuth on a loopback host)",
      ),
    );
    await expect(serveHttp({ createSession, token: "short" })).rejects.toThrow(
      /token must be at least 16 characters without whitespace .*got 5 characters/,
    );
    await expect(serveHttp({ createSession, insecureNoAuth: true, host: "0.0.0.0" })).rejects.toThrow(
      /insecureNoAuth is allowed only on a loopback host, not "0.0.0.0"/,
    );
    await expect(serveHttp({ createSession, token, port: 70_000 })).rejects.toThrow(
      /port must be an integer from 0 to 65535, got 70000/,
    );
    const open = await serveHttp({ createSession, insecureNoAuth: true, tools: testTools });
    try {
      const { client, transport } = await connect(open.url, "anything");
      expect((await client.listTools()).tools).toHaveLength(3);
      await transport.terminateSession();
      await client.close();
    } finally {
      await open.close();
    }
  });

  for (const host of ["::1", "[::1]"]) {
    it(`takes ${host} as loopback, to bind and in the Host header`, async () => {
      const open = await serveHttp({ createSession, host, insecureNoAuth: true, tools: testTools });
      try {
        expect(open.url).toMatch(/^http:\/\/\[::1\]:\d+\/mcp$/);
        const { client, transport } = await connect(open.url, "anything");
        expect((await client.listTools()).tools).toHaveLength(3);
        await transport.terminateSession();
        await client.close();
        const port = new URL(open.url).port;
        const statusFor = (hostHeader: string) =>
          new Promise<number>((resolve, reject) => {
            const request = httpRequest(
              open.url,
              { method: "POST", headers: { Host: hostHeader, "Content-Type": "application/json" } },
              (response) => {
                response.resume();
                resolve(response.statusCode ?? 0);
              },
            );
            request.on("error", reject);
            request.end("{}");
          });
        // 400 (not an initialize request) means the Host passed; 403 means it did not.
        for (const hostHeader of [`[::1]:${port}`, "::1", `localhost:${port}`, `127.0.0.1:${port}`])
          expect(await statusFor(hostHeader), hostHeader).toBe(400);
        expect(await statusFor(`evil.example:${port}`)).toBe(403);
      } finally {
        await open.close();
      }
    });
  }
});
