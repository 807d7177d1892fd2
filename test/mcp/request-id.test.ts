/** Recovering a too-large request's id from its kept edges, never by guessing. */

import { describe, expect, it } from "vitest";
import { recoverRequestId } from "../../src/mcp/request-id.js";

const edges = (line: string, keep = 64): [Buffer, Buffer] => [
  Buffer.from(line.slice(0, keep)),
  Buffer.from(line.slice(-keep)),
];
const big = "x".repeat(10_000);

describe("recoverRequestId", () => {
  it("finds the id the TypeScript SDK writes last, and the id other clients write first", () => {
    expect(recoverRequestId(...edges(`{"method":"tools/call","params":{"a":"${big}"},"jsonrpc":"2.0","id":7}`))).toBe(
      7,
    );
    expect(recoverRequestId(...edges(`{"jsonrpc":"2.0","id":"req-9","method":"tools/call","params":"${big}"}`))).toBe(
      "req-9",
    );
    expect(
      recoverRequestId(...edges(`{ "jsonrpc" : "2.0" , "id" : 12 , "params" : {"x":[1,{"id":3}]}, "m":"${big}"}`, 200)),
    ).toBe(12);
  });

  it("does not take a nested id, a notification's or one inside a string for the request's", () => {
    expect(recoverRequestId(...edges(`{"method":"x","params":{"a":"${big}","id":5}}`))).toBeNull();
    expect(recoverRequestId(...edges(`{"method":"x","params":{"a":"${big}\\",\\"id\\":5}"}}`))).toBeNull();
    expect(recoverRequestId(...edges(`{"params":{"id":4,"a":"${big}"},"method":"x"}`))).toBeNull();
    expect(recoverRequestId(...edges(`{"method":"x","params":"${big}","id":null}`))).toBeNull();
  });

  it("answers null for what is not JSON at all", () => {
    expect(recoverRequestId(...edges(big))).toBeNull();
    expect(recoverRequestId(Buffer.from([0xff, 0xfe, 0x00]), Buffer.from("}}}"))).toBeNull();
  });
});
