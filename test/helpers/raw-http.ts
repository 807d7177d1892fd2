/**
 * HTTP spoken over a bare socket, for requests no client library will send:
 * malformed targets, lying Content-Length headers, a body that never comes.
 */

import { connect } from "node:net";

export interface RawAnswer {
  /** The status code, or 0 when the server closed the connection without answering. */
  status: number;
  /** Everything the server sent. */
  text: string;
  /** True when the server closed the connection (rather than this helper, after a complete answer). */
  closedByServer: boolean;
}

/**
 * Sends `request` as is and reads the answer: until the server closes the
 * connection or a complete answer (its headers and content-length bytes) has
 * arrived. `limitMs` only catches a server that hangs; it measures nothing.
 */
export function rawExchange(
  port: number,
  request: string | Buffer,
  limitMs = 15_000,
  /** More of the request, written once it resolves (a body that comes after its headers). */
  more?: Promise<string | Buffer>,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(request);
      void more?.then((rest) => {
        if (!socket.destroyed) socket.write(rest);
      });
    });
    let text = "";
    let done = false;
    const finish = (closedByServer: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: status ? Number(status[1]) : 0, text, closedByServer });
    };
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      socket.destroy();
      reject(new Error(`no complete answer within ${limitMs} ms; got ${JSON.stringify(text.slice(0, 200))}`));
    }, limitMs);
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (complete(text)) finish(false);
    });
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
  });
}

function complete(text: string): boolean {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const head = text.slice(0, end);
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (length) return text.length - end - 4 >= Number(length[1]);
  // A chunked answer is complete at its last chunk.
  if (/\r\ntransfer-encoding: *chunked/i.test(head)) return text.endsWith("\r\n0\r\n\r\n");
  return false;
}

/** A small deterministic generator, so a fuzz run that fails can be repeated exactly. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Request targets that break percent-decoding, URL parsing or routing. */
export function hostileTargets(prefix: string, count: number, seed = 1): string[] {
  const fixed = [
    `${prefix}/%E0%A4%A`,
    `${prefix}/%`,
    `${prefix}/%%`,
    `${prefix}/%zz`,
    `${prefix}/%C0%AF`,
    `${prefix}/%FF%FE`,
    `${prefix}/%E0%A4%A/executions`,
    `${prefix}/%2e%2e/%2e%2e/etc/passwd`,
    `${prefix}/..%2F..%2F`,
    `${prefix}/sessions/%00`,
    `${prefix}/sessions/x/executions/%E0%A4%A/cancel`,
    "//[",
    "//[::1",
    "http://[",
    "*",
    "/%",
    `${prefix}/${"a".repeat(6000)}`,
    `${prefix}?${"%".repeat(100)}`,
  ];
  const random = seededRandom(seed);
  const alphabet = [
    "%",
    "%E0",
    "%A4",
    "%A",
    "%C3",
    "%28",
    "/",
    "..",
    "?",
    "#",
    "[",
    "]",
    "@",
    ":",
    "a",
    "%2F",
    "%ZZ",
    ";",
  ];
  const out = [...fixed];
  while (out.length < count) {
    let target = `${prefix}/`;
    const parts = 1 + Math.floor(random() * 8);
    for (let i = 0; i < parts; i++) target += alphabet[Math.floor(random() * alphabet.length)];
    out.push(target);
  }
  return out;
}

/** Header sets a careless or hostile client may send (framing lies, garbage values). */
export function hostileHeaderSets(host: string, token: string): string[][] {
  return [
    [`Host: ${host}`, "Content-Length: -1"],
    [`Host: ${host}`, "Content-Length: abc"],
    [`Host: ${host}`, "Content-Length: 5", "Content-Length: 6"],
    [`Host: ${host}`, "Transfer-Encoding: chunked", "Content-Length: 3"],
    [`Host: ${host}`, "Authorization: Bearer"],
    [`Host: ${host}`, "Authorization: Basic Zm9vOmJhcg=="],
    [`Host: ${host}`, `Authorization: Bearer ${token}x`],
    [`Host: ${host}`, `Authorization: Bearer ${"\u00ff".repeat(64)}`],
    [`Host: ${host}`, `Authorization: ${"B".repeat(9000)}`],
    [`Host: [::1`],
    [`Host: ${"h".repeat(5000)}`],
    [],
    [`Host: ${host}`, "Content-Type: application/json; charset=\u00ff", `Authorization: Bearer ${token}`],
    [`Host: ${host}`, "mcp-session-id: %E0%A4%A", `Authorization: Bearer ${token}`],
    [`Host: ${host}`, "Expect: 100-continue", `Authorization: Bearer ${token}`],
    [`Host: ${host}`, "Accept: \u0000", `Authorization: Bearer ${token}`],
  ];
}
