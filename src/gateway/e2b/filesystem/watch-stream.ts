/**
 * WatchDir: a start event once the watch is armed, then the events as they
 * come, and a keepalive every `Keepalive-Ping-Interval` seconds when the
 * client asks for one (E2B's SDK asks for 50) so idle proxies keep the
 * stream open. It ends when the client goes, and with an error when the
 * directory is removed or the sandbox's session closes.
 */

import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  WatchDirResponseSchema,
  WatchDirResponse_KeepAliveSchema,
  WatchDirResponse_StartEventSchema,
  type WatchDirRequest,
  type WatchDirResponse,
} from "../gen/filesystem/filesystem_pb.js";
import type { E2bSandbox } from "../sandbox.js";
import { toConnectError } from "./errors.js";
import { startWatch, type SandboxWatch } from "./watch.js";

/** The keepalive interval the client asked for, in ms, kept between 1 s and 1 h; undefined for none. */
function keepaliveMs(header: string | null): number | undefined {
  const seconds = Number(header);
  if (header === null || !Number.isFinite(seconds) || seconds <= 0) return undefined;
  return Math.min(Math.max(seconds, 1), 3600) * 1000;
}

export async function* watchDirStream(
  sandbox: E2bSandbox,
  request: WatchDirRequest,
  context: HandlerContext,
): AsyncGenerator<WatchDirResponse> {
  const pending: WatchDirResponse[] = [];
  let wake: (() => void) | undefined;
  const notify = (): void => {
    wake?.();
    wake = undefined;
  };
  let watch: SandboxWatch;
  try {
    watch = await startWatch(sandbox, request, (event) => {
      pending.push(create(WatchDirResponseSchema, { event: { case: "filesystem", value: event } }));
      notify();
    });
  } catch (error) {
    throw toConnectError(error);
  }
  let ended = false;
  void watch.ended.then(() => {
    ended = true;
    notify();
  });
  context.signal.addEventListener("abort", notify, { once: true });
  const interval = keepaliveMs(context.requestHeader.get("keepalive-ping-interval"));
  const timer =
    interval === undefined
      ? undefined
      : setInterval(() => {
          pending.push(
            create(WatchDirResponseSchema, {
              event: { case: "keepalive", value: create(WatchDirResponse_KeepAliveSchema) },
            }),
          );
          notify();
        }, interval);
  try {
    yield create(WatchDirResponseSchema, {
      event: { case: "start", value: create(WatchDirResponse_StartEventSchema) },
    });
    for (;;) {
      while (pending.length > 0) yield pending.shift()!;
      if (context.signal.aborted) return;
      if (ended) throw await watch.endError();
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    if (timer !== undefined) clearInterval(timer);
    context.signal.removeEventListener("abort", notify);
    await watch.close().catch(() => undefined);
  }
}
