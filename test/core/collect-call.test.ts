/**
 * collectCall. A call's output that is already waiting to be read when the process's exit
 * is seen belongs to the call, even when this process was descheduled for
 * longer than the drain after an exit (a loaded machine): it then runs its
 * timers before it polls for I/O. CI at load 38 got empty replies that way.
 * And stdout and stderr apart on a transport that cannot keep them apart.
 */

import { createServer, connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { collectCall, type EndDetector } from "../../src/core/collect-call.js";
import { UnsupportedError } from "../../src/core/errors.js";
import { MarkerScanner } from "../../src/core/marker.js";
import type { ProcessHandle, Transport } from "../../src/core/transport.js";

const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
});

/** Two ends of a real loopback connection: what one writes, the other reads in a later poll for I/O. */
async function socketPair(): Promise<[Socket, Socket]> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
  const writer = connect(port, "127.0.0.1");
  const reader = await accepted;
  server.close();
  sockets.push(writer, reader);
  return [writer, reader];
}

/** An end detector that never sees an end: only the drain after the exit finishes the call. */
const noMarker: EndDetector = {
  done: false,
  marker: undefined,
  pid: undefined,
  push: (chunk) => chunk,
  flush: () => new Uint8Array(),
};

function busyFor(ms: number): void {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    // the process holds the CPU, as one descheduled holds nothing: its timers are due when it wakes
  }
}

describe("collectCall", () => {
  it("keeps output that arrived while the process was descheduled past the drain after its exit", async () => {
    const [writer, reader] = await socketPair();
    let exited!: (code: number) => void;
    const exit = new Promise<number>((resolve) => (exited = resolve));
    const handle: ProcessHandle = { output: reader, wait: () => exit, kill: () => undefined };
    const transport = { name: "test", outputAfterExitMs: 50 } as unknown as Transport;
    const outcome = collectCall(
      transport,
      handle,
      { maxOutputBytes: 10_000, outputHeadFraction: 0.4, killGraceMs: 100 },
      { timeoutMs: 60_000 },
      new AbortController().signal,
      noMarker,
    );
    // The exit is seen (collectCall's handler arms its drain first), then the output lands and this process
    // stalls for longer than the drain before it polls again.
    exited(0);
    await exit.then(() => {
      writer.write("the reply\n");
      busyFor(300);
    });
    const result = await outcome;
    expect(result).toMatchObject({ exitCode: 0, text: "the reply\n" });
  });

  it("answers a stopped call only once its kill rounds are done, even when they take longer than the wait after a kill", async () => {
    let exited!: (code: number) => void;
    const exit = new Promise<number>((resolve) => (exited = resolve));
    const handle: ProcessHandle = {
      // No output at all: the stream ends when the process does.
      output: (async function* (): AsyncGenerator<Uint8Array> {
        await exit;
        yield* [];
      })(),
      wait: () => exit,
      kill: () => undefined,
    };
    let killDone = false;
    // A kill round inside a box on a loaded machine: slower than the 5 s an exit is waited for after a kill.
    const transport = {
      name: "test",
      killTree: async () => {
        await new Promise((resolve) => setTimeout(resolve, 5500));
        killDone = true;
        exited(137);
        return true;
      },
    } as unknown as Transport;
    const result = await collectCall(
      transport,
      handle,
      { maxOutputBytes: 10_000, outputHeadFraction: 0.4, killGraceMs: 0 },
      { timeoutMs: 50 },
      new AbortController().signal,
      noMarker,
    );
    expect(result.timedOut).toBe(true);
    expect(killDone).toBe(true);
  }, 30_000);

  it("answers separateStreams on a handle without a stderr with an UnsupportedError naming the backend, and stops the call", async () => {
    let killed = false;
    const handle: ProcessHandle = {
      output: (async function* () {})(),
      wait: () => new Promise<number>(() => undefined),
      kill: () => {
        killed = true;
      },
    };
    const transport = { name: "custom" } as Transport;
    const secret = "00112233445566778899aabbccddeeff";
    const call = collectCall(
      transport,
      handle,
      { maxOutputBytes: 1000, outputHeadFraction: 0.4, killGraceMs: 100 },
      { timeoutMs: 60_000, separateStreams: true },
      new AbortController().signal,
      new MarkerScanner(secret),
      new MarkerScanner(secret),
    );
    await expect(call).rejects.toThrow(UnsupportedError);
    await expect(call).rejects.toThrow("The custom backend cannot keep stderr apart from stdout");
    expect(killed).toBe(true);
  });
});
