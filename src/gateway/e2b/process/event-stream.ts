/**
 * A process's events as a server stream, as envd sends them: `start {pid}`
 * first, then data and one `end`, with a keepalive every
 * `Keepalive-Ping-Interval` seconds (the SDK asks for 50) so proxies keep an
 * idle stream open. The client going away ends the stream, not the process.
 */

import type { HandlerContext } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ProcessEventSchema } from "../gen/process/process_pb.js";
import type { ProcessUpdate, SandboxProcess } from "./sandbox-process.js";

type EventInit = MessageInitShape<typeof ProcessEventSchema>;

/** Keepalives no closer than this, whatever the header asks. */
const MIN_KEEPALIVE_S = 1;

export async function* processEvents(
  process: SandboxProcess,
  ctx: HandlerContext,
): AsyncGenerator<{ event: EventInit }> {
  const queue: ProcessUpdate[] = [];
  let wake: (() => void) | undefined;
  const stop = process.watch((update) => {
    queue.push(update);
    wake?.();
  });
  const onAbort = (): void => wake?.();
  ctx.signal.addEventListener("abort", onAbort);
  const interval = Number(ctx.requestHeader.get("keepalive-ping-interval"));
  const keepaliveMs =
    Number.isFinite(interval) && interval > 0 ? Math.max(interval, MIN_KEEPALIVE_S) * 1000 : undefined;
  try {
    yield { event: { event: { case: "start", value: { pid: process.pid } } } };
    for (;;) {
      const update = queue.shift();
      if (update !== undefined) {
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

function toEvent(update: ProcessUpdate): EventInit {
  if (update.kind === "data")
    return { event: { case: "data", value: { output: { case: update.output, value: update.data } } } };
  const { exitCode, exited, status, error } = update.end;
  return { event: { case: "end", value: { exitCode, exited, status, ...(error === undefined ? {} : { error }) } } };
}
