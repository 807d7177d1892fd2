/**
 * A process's events as a server stream, as envd sends them: `start {pid}`
 * first, then data and one `end`, with a keepalive every
 * `Keepalive-Ping-Interval` seconds (the SDK asks for 50) so proxies keep an
 * idle stream open. The client going away ends the stream, not the process.
 */

import type { HandlerContext } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ProcessEventSchema } from "../gen/process/process_pb.js";
import type { OutputKind, ProcessUpdate, SandboxProcess } from "./sandbox-process.js";

type EventInit = MessageInitShape<typeof ProcessEventSchema>;

/** Keepalives no closer than this and no further apart, whatever the header asks (setTimeout overflows past 2^31 ms). */
const MIN_KEEPALIVE_S = 1;
const MAX_KEEPALIVE_S = 3600;
/**
 * Output waiting for a client that reads slower than the process writes is
 * bounded: past this, data is skipped, and a notice on the same stream says
 * how much once the client catches up (memory stays bounded per stream).
 */
export const MAX_STREAM_BACKLOG_BYTES = 16 * 1024 * 1024;

export async function* processEvents(
  process: SandboxProcess,
  ctx: HandlerContext,
): AsyncGenerator<{ event: EventInit }> {
  const queue: ProcessUpdate[] = [];
  let queuedBytes = 0;
  const skipped = new Map<OutputKind, number>();
  let wake: (() => void) | undefined;
  const stop = process.watch((update) => {
    if (update.kind === "data") {
      if (queuedBytes + update.data.length > MAX_STREAM_BACKLOG_BYTES) {
        skipped.set(update.output, (skipped.get(update.output) ?? 0) + update.data.length);
        return;
      }
      queuedBytes += update.data.length;
    }
    queue.push(update);
    wake?.();
  });
  const onAbort = (): void => wake?.();
  ctx.signal.addEventListener("abort", onAbort);
  const interval = Number(ctx.requestHeader.get("keepalive-ping-interval"));
  const keepaliveMs =
    Number.isFinite(interval) && interval > 0
      ? Math.min(Math.max(interval, MIN_KEEPALIVE_S), MAX_KEEPALIVE_S) * 1000
      : undefined;
  try {
    yield { event: { event: { case: "start", value: { pid: process.pid } } } };
    for (;;) {
      if (queuedBytes === 0 && skipped.size > 0) {
        const notices = skipNotices(skipped);
        for (const notice of notices) if (notice.kind === "data") queuedBytes += notice.data.length;
        queue.unshift(...notices);
      }
      const update = queue.shift();
      if (update !== undefined) {
        if (update.kind === "data") queuedBytes -= update.data.length;
        yield { event: toEvent(update) };
        if (update.kind === "end") return;
        continue;
      }
      if (ctx.signal.aborted) return;
      let timer: NodeJS.Timeout | undefined;
      const tick = await new Promise<boolean>((resolve) => {
        wake = () => resolve(false);
        if (keepaliveMs !== undefined) timer = setTimeout(() => resolve(true), keepaliveMs);
      });
      clearTimeout(timer);
      wake = undefined;
      if (tick && queue.length === 0) yield { event: { event: { case: "keepalive", value: {} } } };
    }
  } finally {
    stop();
    ctx.signal.removeEventListener("abort", onAbort);
  }
}

/** Said on the stream that lost the bytes (stderr for stdout's, the terminal for a PTY's), once the backlog is gone. */
function skipNotices(skipped: Map<OutputKind, number>): ProcessUpdate[] {
  const notices = [...skipped].map(([output, bytes]): ProcessUpdate => {
    const text = `\n[shellwright: ${bytes} bytes of ${output} skipped: this stream was read slower than the process wrote]\n`;
    return { kind: "data", output: output === "stdout" ? "stderr" : output, data: new TextEncoder().encode(text) };
  });
  skipped.clear();
  return notices;
}

function toEvent(update: ProcessUpdate): EventInit {
  if (update.kind === "data")
    return { event: { case: "data", value: { output: { case: update.output, value: update.data } } } };
  const { exitCode, exited, status, error } = update.end;
  return { event: { case: "end", value: { exitCode, exited, status, ...(error === undefined ? {} : { error }) } } };
}
