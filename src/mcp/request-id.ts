/**
 * The id of a JSON-RPC request that was too large to read, from the only
 * parts of it that were kept: its first and last few KiB. Clients put the id
 * at either end (the TypeScript SDK writes `{method, params, jsonrpc, id}`,
 * others `{jsonrpc, id, method, params}`), so both ends are tried; when
 * neither shows it without guessing, the answer is null, as JSON-RPC says
 * for a request whose id cannot be known.
 */

import type { RequestId } from "@modelcontextprotocol/sdk/types.js";

const STRING = String.raw`"(?:[^"\\\x00-\x1f]|\\.)*"`;
const NUMBER = String.raw`-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?`;
const ID_VALUE = `(${STRING}|${NUMBER}|null)`;

/**
 * The last member of the top-level object, when it is the id: `,"id":7}` at
 * the very end of a line. A `}` that ends a valid JSON line closes the
 * top-level object, and the member right before it is that object's own.
 */
const ID_AT_END = new RegExp(String.raw`[{,]\s*"id"\s*:\s*${ID_VALUE}\s*\}\s*$`);
const PRIMITIVE = new RegExp(String.raw`^(?:${STRING}|${NUMBER}|true|false|null)`);
const KEY = new RegExp(String.raw`^${STRING}`);

export function recoverRequestId(head: Buffer, tail: Buffer): RequestId | null {
  return idFromHead(head.toString("utf8")) ?? idFromTail(tail.toString("utf8")) ?? null;
}

function idFromTail(text: string): RequestId | undefined {
  const match = ID_AT_END.exec(text);
  return match === null ? undefined : idValue(match[1]!);
}

/**
 * Walks the top-level members from the start while each value is short
 * enough to skip within `text`; stops at the id, or at the first value it
 * cannot see the end of.
 */
function idFromHead(text: string): RequestId | undefined {
  let at = skipSpace(text, 0);
  if (text[at] !== "{") return undefined;
  at++;
  for (;;) {
    at = skipSpace(text, at);
    const key = KEY.exec(text.slice(at, at + 256));
    if (key === null) return undefined;
    at = skipSpace(text, at + key[0].length);
    if (text[at] !== ":") return undefined;
    at = skipSpace(text, at + 1);
    if (key[0] === '"id"') {
      const value = new RegExp(`^${ID_VALUE}`).exec(text.slice(at, at + 1024));
      return value === null ? undefined : idValue(value[1]!);
    }
    const end = skipValue(text, at);
    if (end === undefined) return undefined;
    at = skipSpace(text, end);
    if (text[at] !== ",") return undefined;
    at++;
  }
}

/** The index after the JSON value at `at`, or undefined when it does not end within `text`. */
function skipValue(text: string, at: number): number | undefined {
  const first = text[at];
  if (first !== "{" && first !== "[") {
    const primitive = PRIMITIVE.exec(text.slice(at));
    return primitive === null ? undefined : at + primitive[0].length;
  }
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      const string = KEY.exec(text.slice(i));
      if (string === null) return undefined;
      i += string[0].length - 1;
    } else if (char === "{" || char === "[") depth++;
    else if (char === "}" || char === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && " \t\r\n".includes(text[at]!)) at++;
  return at;
}

/** A JSON-RPC id is a string or a number; `null` (or anything else) is no id. */
function idValue(json: string): RequestId | undefined {
  const value: unknown = JSON.parse(json);
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value)) ? value : undefined;
}
