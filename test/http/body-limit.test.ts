/** src/http/body-limit.ts: a request body read up to a limit, over real loopback HTTP. */

import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBody, TOO_LARGE } from "../../src/http/body-limit.js";

const LIMIT = 1024;

describe("readBody", () => {
  let server: Server;
  let url: string;
  const seen: (number | typeof TOO_LARGE)[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      void readBody(req, LIMIT).then((body) => {
        seen.push(body === TOO_LARGE ? TOO_LARGE : body.length);
        if (body === TOO_LARGE) res.writeHead(413, { connection: "close" }).end("too large");
        else res.writeHead(200).end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Sends `chunks` (chunked unless `headers` says a length) and returns the status and body. */
  const send = (chunks: Buffer[], headers: Record<string, string> = {}): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = request(url, { method: "POST", headers }, (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      for (const chunk of chunks) req.write(chunk);
      // A declared body that is never finished: the answer must come anyway.
      if (
        headers["content-length"] === undefined ||
        Number(headers["content-length"]) === chunks.reduce((n, c) => n + c.length, 0)
      )
        req.end();
    });

  it("returns a body up to the limit whole", async () => {
    const body = Buffer.alloc(LIMIT, "a");
    expect(await send([body.subarray(0, 100), body.subarray(100)])).toEqual({ status: 200, body: body.toString() });
    expect(await send([])).toEqual({ status: 200, body: "" });
  });

  it("answers a body declared too large without waiting for it", async () => {
    const answer = await send([Buffer.alloc(10, "b")], { "content-length": String(500e6) });
    expect(answer.status).toBe(413);
  });

  it("stops keeping a body that grows past the limit, and the answer still arrives", async () => {
    const answer = await send([Buffer.alloc(LIMIT, "c"), Buffer.alloc(64 * 1024, "d"), Buffer.alloc(64 * 1024, "e")]);
    expect(answer).toEqual({ status: 413, body: "too large" });
    expect(seen.at(-1)).toBe(TOO_LARGE);
  });
});
