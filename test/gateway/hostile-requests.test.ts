/**
 * The gateway against requests built to break it: malformed percent-encoding,
 * targets a URL cannot hold, lying headers. None may get past the token check,
 * none may crash a route (500) or put a stack trace in the log.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/index.js";
import { hostileHeaderSets, hostileTargets, rawExchange } from "../helpers/raw-http.js";
import { startTestGateway, TOKEN } from "./helpers.js";

describe("gateway under hostile requests", () => {
  let gateway: Gateway;
  const log: string[] = [];
  let host: string;

  beforeAll(async () => {
    gateway = await startTestGateway({ log: (message) => log.push(message) });
    host = `127.0.0.1:${gateway.port}`;
  });
  afterAll(async () => {
    await gateway.close();
  });

  const send = (target: string, headers: string[]) =>
    rawExchange(gateway.port, `GET ${target} HTTP/1.1\r\n${[...headers, "Connection: close"].join("\r\n")}\r\n\r\n`);

  it("answers a malformed percent-escape with 401 without the token, 400 with it, and logs nothing", async () => {
    for (const target of ["/v1/sessions/%E0%A4%A", "/v1/%", "/v1/sessions/x/executions/%zz"]) {
      const anonymous = await send(target, [`Host: ${host}`]);
      expect(anonymous.status, target).toBe(401);
      const authorized = await send(target, [`Host: ${host}`, `Authorization: Bearer ${TOKEN}`]);
      expect(authorized.status, target).toBe(400);
      expect(authorized.text).toContain("BAD_REQUEST");
    }
    expect(log.filter((line) => /internal error|URIError|\n\s+at /.test(line))).toEqual([]);
  });

  it("answers a target no URL can hold with 401 without the token and 400 with it", async () => {
    expect((await send("//[", [`Host: ${host}`])).status).toBe(401);
    expect((await send("//[", [`Host: ${host}`, `Authorization: Bearer ${TOKEN}`])).status).toBe(400);
  });

  it("gives no 5xx to a bounded fuzz of targets and headers, with or without the token", async () => {
    const answers: { target: string; status: number }[] = [];
    const targets = hostileTargets("/v1", 120, 12);
    for (const target of targets) {
      for (const headers of [[`Host: ${host}`], [`Host: ${host}`, `Authorization: Bearer ${TOKEN}`]]) {
        answers.push({ target, status: (await send(target, headers)).status });
      }
    }
    for (const headers of hostileHeaderSets(host, TOKEN)) {
      for (const method of ["GET", "POST", "DELETE"]) {
        const request = `${method} /v1/sessions HTTP/1.1\r\n${[...headers, "Connection: close"].join("\r\n")}\r\n\r\n`;
        answers.push({
          target: `${method} ${headers.join(" | ").slice(0, 80)}`,
          status: (await rawExchange(gateway.port, request)).status,
        });
      }
    }
    expect(answers.filter((answer) => answer.status >= 500)).toEqual([]);
    // Every request got an answer or a closed connection from the HTTP parser, never a hang.
    expect(answers.length).toBe(targets.length * 2 + hostileHeaderSets(host, TOKEN).length * 3);
    expect(log.filter((line) => /internal error|\n\s+at /.test(line))).toEqual([]);
  });

  it("refuses a 2 GB Content-Length claim at once with 413, without waiting for the body", async () => {
    const answer = await rawExchange(
      gateway.port,
      `POST /v1/sessions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 2147483648\r\n\r\n`,
    );
    expect(answer.status).toBe(413);
  });
});
