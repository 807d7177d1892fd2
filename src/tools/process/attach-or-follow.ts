/**
 * How both output streams of a background process start (output-stream.ts, split-stream.ts): through the session's
 * helper when it attaches the process (Environment.attachProcess); else by following its files from the first byte.
 * A channel the helper refused or lost hands on to following from the bytes it had delivered.
 */

import type { Environment } from "../../core/environment.js";
import type { ProcessAttachRequest, ProcessChannel } from "../../core/process-channel.js";

/** What a stream gives the start. */
export interface FollowingStream {
  /** Follows the process's files from these bytes on (stdout's, or the merged log's; stderr's when it is apart). */
  follow(outputFrom: number, stderrFrom: number): Promise<void>;
  /** Whether the stream was stopped: a channel that ends then is the stream's end. */
  stopped(): boolean;
  /** The channel ended for good: the process ended, a detach or a stop, or the session closed. */
  ended(): void;
  /** Following from where a refused or lost channel stopped could not start. */
  followFailed(): void;
}

export interface StreamStart {
  /** The helper's channel while it lasts: undefined when it did not attach, and once it ended. */
  channel: ProcessChannel | undefined;
  /** Resolves once the output is followed; rejects when a follower could not start (a gateway at its bound). */
  started: Promise<void>;
}

export function attachOrFollow(
  session: Environment,
  request: ProcessAttachRequest,
  stream: FollowingStream,
): StreamStart {
  const channel = session.attachProcess?.(request);
  if (channel === undefined) return { channel, started: stream.follow(0, 0) };
  const start: StreamStart = { channel, started: Promise.resolve() };
  void channel.end.then((end) => {
    start.channel = undefined;
    if (stream.stopped() || end === "ended" || end === "detached" || session.closed) return stream.ended();
    // Refused (the helper did not start it, or has no room) or lost (the helper went away): following goes on from
    // the bytes the channel stopped at.
    stream.follow(channel.offset, channel.stderrOffset).catch(() => stream.followFailed());
  });
  return start;
}
