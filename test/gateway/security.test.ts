/**
 * The gateway's security rules, over real loopback HTTP: the token, body
 * limits, bad input, and which paths a request may name.
 */

import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidOptionError, startGateway, type Gateway } from "../../src/index.js";
import { api, rawRequest, scratchDir, startTestGateway, TOKEN } from "./helpers.js";

describe("gateway security", () => {
  let gateway: Gateway;
  let scratch: ReturnType<typeof scratchDir>;
  let sessionId: string;

  beforeAll(async () => {
    scratch = scratchDir();
    gateway = await startTestGateway({ maxBodyBytes: 64 * 1024, allowedRoots: [scratch.path] });
    const created = await api(gateway, "POST", "/v1/sessions", {});
    expect(created.status).toBe(201);
    sessionId = created.body.id;
  });
  afterAll(async () => {
    await gateway.close();
    scratch.remove();
  });

  it("binds 127.0.0.1 by default", () => {
    expect(gateway.server.address()).toMatchObject({ address: "127.0.0.1" });
  });

  describe("the bearer token", () => {
    const cases: [string, string | null, Record<string, string>?][] = [
      ["missing", null],
      ["wrong, same length", TOKEN.replace(/.$/, "X")],
      ["a prefix of the real one", TOKEN.slice(0, -1)],
      ["the real one with more after it", `${TOKEN}0`],
      ["empty", ""],
      ["in a Basic header", null, { authorization: `Basic ${TOKEN}` }],
    ];
    for (const [what, token, headers] of cases) {
      it(`${what}: 401 and nothing runs`, async () => {
        const marker = join(scratch.path, `ran-${Math.random().toString(16).slice(2)}`);
        const options = { token, ...(headers ? { headers } : {}) };
        const execution = await api(
          gateway,
          "POST",
          `/v1/sessions/${sessionId}/executions`,
          { command: `touch ${marker}` },
          options,
        );
        expect(execution.status).toBe(401);
        expect(execution.body.error).toMatchObject({ code: "UNAUTHORIZED" });
        const create = await api(gateway, "POST", "/v1/sessions", { cwd: scratch.path }, options);
        expect(create.status).toBe(401);
        for (const [method, path] of [
          ["GET", "/v1/sessions"],
          ["DELETE", `/v1/sessions/${sessionId}`],
          ["POST", `/v1/sessions/${sessionId}/executions/x/cancel`],
        ] as const) {
          expect((await api(gateway, method, path, method === "POST" ? {} : undefined, options)).status).toBe(401);
        }
        expect(existsSync(marker)).toBe(false);
        expect(gateway.registry.size).toBe(1);
        // the session survived the DELETE without a token
        expect((await api(gateway, "GET", `/v1/sessions/${sessionId}`)).status).toBe(200);
      });
    }

    it("with the right token, the same command runs", async () => {
      const marker = join(scratch.path, "ran-with-token");
      const r = await api(gateway, "POST", `/v1/sessions/${sessionId}/executions`, { command: `touch ${marker}` });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ exitCode: 0 });
      expect(existsSync(marker)).toBe(true);
    });

    it("health answers without a token but tells nothing more", async () => {
      const anonymous = await api(gateway, "GET", "/v1/health", undefined, { token: null });
      expect(anonymous).toMatchObject({ status: 200, body: { status: "ok" } });
      expect(Object.keys(anonymous.body)).toEqual(["status"]);
      const known = await api(gateway, "GET", "/v1/health");
      expect(known.body).toMatchObject({ status: "ok", sessions: 1, runningExecutions: 0 });
    });

    it("answers 401 to a huge body without reading it, and closes the connection", async () => {
      const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const req = request(
          `${gateway.url}/v1/sessions`,
          { method: "POST", headers: { "content-type": "application/json", "content-length": String(500e6) } },
          (res) => {
            res.resume();
            resolve({ status: res.statusCode ?? 0, connection: res.headers.connection });
          },
        );
        req.on("error", reject);
        req.write(Buffer.alloc(1 << 20, 32)); // 1 MB of the 500 MB announced; the rest never comes
      });
      expect(answer).toEqual({ status: 401, connection: "close" });
    });
  });

  describe("the body", () => {
    it("413 for a body over maxBodyBytes, and nothing runs", async () => {
      const marker = join(scratch.path, "ran-oversize");
      const r = await api(gateway, "POST", `/v1/sessions/${sessionId}/executions`, {
        command: `touch ${marker}`,
        stdin: "x".repeat(100 * 1024),
      });
      expect(r.status).toBe(413);
      expect(r.body.error).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
      expect(r.body.error.message).toContain("65536");
      expect(existsSync(marker)).toBe(false);
      // the server still serves
      expect(
        (await api(gateway, "POST", `/v1/sessions/${sessionId}/executions`, { command: "echo still" })).body.output,
      ).toBe("still\n");
    });

    it("a body just under the limit is accepted", async () => {
      const stdin = "y".repeat(60 * 1024);
      const r = await api(gateway, "POST", `/v1/sessions/${sessionId}/executions`, { command: "wc -c", stdin });
      expect(r.status).toBe(200);
      expect(r.body.output.trim()).toBe(String(stdin.length));
    });

    it("400 with the parser's message for bad JSON", async () => {
      const r = await api(gateway, "POST", `/v1/sessions/${sessionId}/executions`, undefined, {
        rawBody: '{"command": "echo hi",',
      });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("BAD_REQUEST");
      expect(r.body.error.message).toMatch(/^The request body is not valid JSON: /);
    });

    it("400 for JSON that is not an object, an empty body, a wrong field type or an unknown field", async () => {
      const path = `/v1/sessions/${sessionId}/executions`;
      expect((await api(gateway, "POST", path, [1, 2])).body.error.message).toContain(
        "must be a JSON object, got an array",
      );
      expect((await api(gateway, "POST", path, undefined, { rawBody: "" })).body.error.message).toContain("empty");
      const wrongType = await api(gateway, "POST", path, { command: 42 });
      expect(wrongType).toMatchObject({ status: 400, body: { error: { code: "INVALID_OPTION", option: "command" } } });
      const unknown = await api(gateway, "POST", path, { command: "true", timeout: 5 });
      expect(unknown).toMatchObject({ status: 400, body: { error: { code: "INVALID_OPTION", option: "timeout" } } });
      expect(unknown.body.error.message).toContain("timeoutMs");
      const badTimeout = await api(gateway, "POST", path, { command: "true", timeoutMs: -1 });
      expect(badTimeout).toMatchObject({ status: 400, body: { error: { option: "timeoutMs" } } });
      const badBase64 = await api(gateway, "POST", path, { command: "cat", stdinBase64: "not base64!" });
      expect(badBase64).toMatchObject({ status: 400, body: { error: { option: "stdinBase64" } } });
      const badSession = await api(gateway, "POST", "/v1/sessions", { backend: "docker" });
      expect(badSession).toMatchObject({ status: 400, body: { error: { option: "backend" } } });
    });

    it("415 for a body that is not declared as JSON", async () => {
      const r = await api(gateway, "POST", `/v1/sessions/${sessionId}/executions`, undefined, {
        rawBody: '{"command":"true"}',
        headers: { "content-type": "text/plain" },
      });
      expect(r).toMatchObject({ status: 415, body: { error: { code: "UNSUPPORTED_MEDIA_TYPE" } } });
    });

    it("404 and 405 for routes that do not exist", async () => {
      expect((await api(gateway, "GET", "/v2/sessions")).status).toBe(404);
      expect((await api(gateway, "GET", "/v1/nope")).status).toBe(404);
      expect((await api(gateway, "PUT", "/v1/sessions", {})).status).toBe(405);
    });
  });

  describe("paths a request may name", () => {
    it("refuses a cwd outside the allowed roots, for a session and for one call", async () => {
      const create = await api(gateway, "POST", "/v1/sessions", { cwd: "/etc" });
      expect(create).toMatchObject({ status: 403, body: { error: { code: "FORBIDDEN", option: "cwd" } } });
      const call = await api(gateway, "POST", `/v1/sessions/${sessionId}/executions`, { command: "pwd", cwd: "/" });
      expect(call).toMatchObject({ status: 403, body: { error: { option: "cwd" } } });
      const dotdot = await api(gateway, "POST", `/v1/sessions/${sessionId}/executions`, {
        command: "pwd",
        cwd: `${scratch.path}/../..`,
      });
      expect(dotdot.status).toBe(403);
      const relative = await api(gateway, "POST", `/v1/sessions/${sessionId}/executions`, {
        command: "pwd",
        cwd: "sub",
      });
      expect(relative).toMatchObject({ status: 400, body: { error: { option: "cwd" } } });
      const tilde = await api(gateway, "POST", "/v1/sessions", { cwd: "~" });
      expect(tilde.status).toBe(400);
      expect(gateway.registry.size).toBe(1);
    });

    it("refuses a symlink inside a root that points outside it", async () => {
      const link = join(scratch.path, "escape");
      symlinkSync("/etc", link);
      const r = await api(gateway, "POST", `/v1/sessions/${sessionId}/executions`, { command: "pwd", cwd: link });
      expect(r.status).toBe(403);
    });

    it("accepts a cwd under a root", async () => {
      mkdirSync(join(scratch.path, "inside"));
      const r = await api(gateway, "POST", `/v1/sessions/${sessionId}/executions`, {
        command: "pwd",
        cwd: join(scratch.path, "inside"),
      });
      expect(r.body.output).toBe(`${join(scratch.path, "inside")}\n`);
    });

    it("refuses backend options such as stateDir or bashPath from a request", async () => {
      for (const field of ["stateDir", "bashPath"]) {
        const r = await api(gateway, "POST", "/v1/sessions", { [field]: "/tmp/evil" });
        expect(r).toMatchObject({ status: 400, body: { error: { option: field } } });
      }
    });
  });

  describe("starting the server", () => {
    it("refuses to start without a token", async () => {
      await expect(startGateway({ port: 0 })).rejects.toThrow(InvalidOptionError);
      await expect(startGateway({ port: 0, token: "short" })).rejects.toThrow(/at least 16/);
    });

    it("allows no token only on loopback", async () => {
      await expect(startGateway({ port: 0, insecureNoAuth: true, host: "0.0.0.0" })).rejects.toThrow(
        /only on a loopback address/,
      );
      const open = await startGateway({ port: 0, insecureNoAuth: true, log: () => undefined });
      try {
        expect((await api(open, "GET", "/v1/sessions", undefined, { token: null })).status).toBe(200);
        // a page reached through DNS rebinding carries its own Host name
        const rebound = await rawRequest(open, "GET", "/v1/sessions", { host: "evil.example:80" });
        expect(rebound.status).toBe(403);
        expect(JSON.parse(rebound.body)).toMatchObject({ error: { code: "FORBIDDEN" } });
        expect((await rawRequest(open, "GET", "/v1/sessions", { host: "localhost:1" })).status).toBe(200);
      } finally {
        await open.close();
      }
    });

    for (const host of ["::1", "[::1]"]) {
      it(`takes ${host} as loopback, to bind and in the Host header`, async () => {
        const open = await startGateway({ port: 0, host, insecureNoAuth: true, log: () => undefined });
        try {
          expect(open.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
          for (const hostHeader of [`[::1]:${open.port}`, "[::1]", "::1", `localhost:${open.port}`, "127.0.0.1"]) {
            expect((await rawRequest(open, "GET", "/v1/sessions", { host: hostHeader })).status).toBe(200);
          }
          expect((await rawRequest(open, "GET", "/v1/sessions", { host: "evil.example" })).status).toBe(403);
        } finally {
          await open.close();
        }
      });
    }

    it("refuses a token with whitespace, naming its length but not the token", async () => {
      const error = (await startGateway({ port: 0, token: "secret-secret secret" }).catch((e: unknown) => e)) as Error;
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error.message).toMatch(/at least 16 characters without whitespace.*got 20 characters with whitespace/);
      expect(error.message).not.toContain("secret");
    });
  });
});
