/**
 * The library's stdio server (serveStdio over the StdioTransport) fed
 * messages past its limit, and lines that are not JSON-RPC: each is answered
 * with a JSON-RPC error, and the connection goes on. The real `shellwright
 * mcp` process gets the same cases over OS pipes in cli.test.ts.
 */

import { PassThrough } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { createEnvironment, InvalidOptionError } from "../../src/index.js";
import { serveStdio } from "../../src/mcp/stdio.js";
import { eventually } from "../helpers/processes.js";
import { answersOn, call, writeLongLine } from "./helpers.js";

interface Served {
  client: Client;
  input: PassThrough;
  answers: Record<string, unknown>[];
  served: Promise<void>;
}

let current: Served | undefined;
afterEach(async () => {
  await current?.client.close();
  current?.input.end();
  await current?.served;
  current = undefined;
});

/** serveStdio on two streams, with the MCP SDK's client on their other ends. */
async function serve(maxMessageBytes?: number): Promise<Served> {
  const input = new PassThrough();
  const output = new PassThrough();
  const { answers } = answersOn(output);
  const served = serveStdio({
    createSession: () => createEnvironment(),
    input,
    output,
    ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
  });
  const client = new Client({ name: "shellwright-test", version: "0.0.0" });
  // The SDK's stdio "server" transport is a JSON-RPC reader and writer on two streams: the client's end here.
  await client.connect(new StdioServerTransport(output, input));
  current = { client, input, answers, served };
  return current;
}

describe("serveStdio: a message over maxMessageBytes", () => {
  it("answers a valid tool call over the limit with an error that has its id, names the limit and the way to raise it", async () => {
    const { client } = await serve(1024 * 1024);
    const failure = await client
      .callTool({ name: "write_file", arguments: { path: "/tmp/never-written", content: "x".repeat(1_500_000) } })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpError);
    expect((failure as McpError).code).toBe(ErrorCode.InvalidRequest);
    expect((failure as McpError).message).toContain("over this server's limit of 1048576 bytes");
    expect((failure as McpError).message).toContain("--max-message-bytes");
    expect((failure as McpError).message).toContain("maxMessageBytes");
    // The connection goes on: the next call is served in the same session.
    const next = await call(client, "terminal", { command: "echo still here" });
    expect(next.structuredContent).toMatchObject({ output: "still here\n", exit_code: 0 });
  });

  it("answers a 20 MB line that is not JSON with an error of id null, and serves the next call", async () => {
    const { client, input, answers } = await serve();
    await writeLongLine(input, 20 * 1024 * 1024);
    await eventually(() => answers.some((answer) => answer.id === null), "the error for the long line");
    const error = answers.find((answer) => answer.id === null)!.error as {
      code: number;
      message: string;
      data: unknown;
    };
    expect(error.code).toBe(ErrorCode.InvalidRequest);
    expect(error.message).toContain(`${20 * 1024 * 1024} bytes, over this server's limit of 10485760 bytes`);
    expect(error.data).toEqual({ messageBytes: 20 * 1024 * 1024, maxMessageBytes: 10 * 1024 * 1024 });
    const next = await call(client, "terminal", { command: "echo after the long line" });
    expect(next.structuredContent).toMatchObject({ output: "after the long line\n" });
  });

  it("takes a message within the limit: a 2 MB write_file with the limit at 4 MiB", async () => {
    const { client } = await serve(4 * 1024 * 1024);
    const path = `/tmp/shellwright-stdio-limit-${process.pid}`;
    const written = await call(client, "write_file", { path, content: "y".repeat(2_000_000) });
    expect(written.isError, JSON.stringify(written.structuredContent)).toBe(false);
    const size = await call(client, "terminal", { command: `wc -c < ${path}; rm -f ${path}` });
    expect(size.structuredContent).toMatchObject({ output: "2000000\n" });
  });
});

describe("serveStdio: over-size lines against the reader", () => {
  it("answers each of several over-size lines in one write, the valid lines between them served, CRLF taken", async () => {
    const { client, input, answers } = await serve(4096);
    const big = (id: string | number) =>
      `{"method":"tools/call","params":{"name":"terminal","arguments":{"command":"echo ${"x".repeat(5000)}"}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
    input.write(
      [
        big('a}b"c'),
        '{"jsonrpc":"2.0","id":"small","method":"tools/list"}\r',
        big(41),
        `{"jsonrpc":"2.0","id":"first","method":"ping","params":{"pad":"${"y".repeat(9000)}"}}`,
        "",
      ].join("\n"),
    );
    const ids = ['a}b"c', "small", 41, "first"];
    const answerTo = (id: unknown) => answers.find((answer) => answer.id === id);
    await eventually(() => ids.every((id) => answerTo(id) !== undefined), "an answer to each");
    const codes = ids.map((id) => (answerTo(id)!.error as { code?: number } | undefined)?.code);
    expect(codes).toEqual([ErrorCode.InvalidRequest, undefined, ErrorCode.InvalidRequest, ErrorCode.InvalidRequest]);
    expect(answerTo("small")!.result).toMatchObject({ tools: expect.any(Array) });
    expect((await call(client, "terminal", { command: "echo after" })).structuredContent).toMatchObject({
      output: "after\n",
    });
  });

  it("does not disturb a call that is running while an over-size line arrives", async () => {
    const { client, input, answers } = await serve(1024 * 1024);
    const running = call(client, "terminal", { command: "sleep 1; echo slept" });
    await writeLongLine(input, 3 * 1024 * 1024);
    await eventually(() => answers.some((answer) => answer.id === null), "the error for the long line");
    expect((await running).structuredContent).toMatchObject({ output: "slept\n", exit_code: 0 });
  });
});

describe("serveStdio: lines that are not JSON-RPC", () => {
  it("answers a line that is not JSON with a parse error and one that is not JSON-RPC with invalid request", async () => {
    const { client, input, answers } = await serve();
    input.write("this is not json\n");
    input.write('{"jsonrpc":"2.0","id":77,"method":5}\n');
    input.write("\n   \n");
    await eventually(() => answers.filter((answer) => "error" in answer).length >= 2, "both errors");
    const errors = answers.filter((answer) => "error" in answer);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: ErrorCode.ParseError } });
    expect(errors[1]).toMatchObject({ jsonrpc: "2.0", id: 77, error: { code: ErrorCode.InvalidRequest } });
    expect((await call(client, "terminal", { command: "echo fine" })).structuredContent).toMatchObject({
      output: "fine\n",
    });
  });
});

describe("serveStdio options", () => {
  it("refuses a maxMessageBytes that is not a positive integer, or over 256 MiB, naming it", async () => {
    for (const bad of [0, -1, 1.5, "10", 512 * 1024 * 1024]) {
      const failure = await serveStdio({
        createSession: () => createEnvironment(),
        input: new PassThrough(),
        output: new PassThrough(),
        maxMessageBytes: bad as number,
      }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(InvalidOptionError);
      expect((failure as InvalidOptionError).option).toBe("maxMessageBytes");
    }
  });
});
