/**
 * A process's event stream for a client that reads slower than the process
 * writes: what waits for it is bounded, and the stream says what it skipped.
 */

import { describe, expect, it } from "vitest";
import type { HandlerContext } from "@connectrpc/connect";
import { MAX_STREAM_BACKLOG_BYTES, processEvents } from "../../../../src/gateway/e2b/process/event-stream.js";
import { exitEnd, SandboxProcess } from "../../../../src/gateway/e2b/process/sandbox-process.js";

/** The two things processEvents reads of a handler's context. */
function context(headers: Record<string, string> = {}): HandlerContext {
  return { signal: new AbortController().signal, requestHeader: new Headers(headers) } as unknown as HandlerContext;
}

describe("processEvents", () => {
  it("bounds the backlog of a client that does not read, and says how much was skipped", async () => {
    const process = new SandboxProcess(1000, undefined, { cmd: "x", args: [], envs: {} }, false, undefined);
    const events = processEvents(process, context());
    expect((await events.next()).value?.event.event?.case).toBe("start");
    const chunk = "a".repeat(1024 * 1024);
    const chunks = MAX_STREAM_BACKLOG_BYTES / chunk.length + 8;
    for (let i = 0; i < chunks; i++) process.output("stdout", chunk);
    process.finish(exitEnd(0));

    let stdoutBytes = 0;
    let notice = "";
    let end = false;
    for await (const { event } of events) {
      const e = event.event!;
      if (e.case === "data" && e.value.output?.case === "stdout") stdoutBytes += e.value.output.value!.length;
      if (e.case === "data" && e.value.output?.case === "stderr")
        notice += new TextDecoder().decode(e.value.output.value);
      if (e.case === "end") end = true;
    }
    expect(stdoutBytes).toBe(MAX_STREAM_BACKLOG_BYTES);
    expect(notice).toContain(`${8 * chunk.length} bytes of stdout skipped`);
    expect(end).toBe(true);
  });

  it("passes everything to a client that keeps up", async () => {
    const process = new SandboxProcess(1001, undefined, { cmd: "x", args: [], envs: {} }, false, undefined);
    const events = processEvents(process, context());
    await events.next();
    let bytes = 0;
    const chunk = "\0".repeat(1024 * 1024);
    for (let i = 0; i < 40; i++) {
      process.output("stdout", chunk);
      const next = await events.next();
      const e = next.value!.event.event!;
      if (e.case === "data") bytes += e.value.output!.value!.length;
    }
    expect(bytes).toBe(40 * chunk.length);
  });

  it("sends keepalives on an idle stream at the interval the client asks for", async () => {
    const process = new SandboxProcess(1002, undefined, { cmd: "x", args: [], envs: {} }, false, undefined);
    const events = processEvents(process, context({ "keepalive-ping-interval": "1" }));
    await events.next();
    expect((await events.next()).value?.event.event?.case).toBe("keepalive");
    process.finish(exitEnd(0));
    expect((await events.next()).value?.event.event?.case).toBe("end");
    expect((await events.next()).done).toBe(true);
  });

  it("clamps a keepalive interval past what a timer holds (it would fire every millisecond)", async () => {
    const process = new SandboxProcess(1003, undefined, { cmd: "x", args: [], envs: {} }, false, undefined);
    // 3e6 s is 3e9 ms, past setTimeout's 2^31 - 1: unclamped, Node fires it after 1 ms.
    const events = processEvents(process, context({ "keepalive-ping-interval": "3000000" }));
    await events.next();
    const next = events.next();
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.finish(exitEnd(0));
    expect((await next).value?.event.event?.case).toBe("end");
  });
});
