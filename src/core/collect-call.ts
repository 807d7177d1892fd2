/**
 * One call's output and end, whichever path runs it: the output is kept
 * bounded (head and tail) and streamed, the call ends at its process's exit
 * plus its end (marker, fast-path report or end of stream), and a timeout or
 * an interrupt kills the call's whole tree in the backend before the result
 * is given.
 */

import { StringDecoder } from "node:string_decoder";
import { UnsupportedError } from "./errors.js";
import { OutputCollector } from "./output.js";
import type { MarkerPayload } from "./marker-payload.js";
import { StreamsCollector, type StreamName } from "./stream-output.js";
import type { ProcessHandle, Transport } from "./transport.js";

export interface CallLimits {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  onOutput?: ((text: string) => void) | undefined;
  /** The handle's stdout and stderr come apart (its `stderr`): collect them apart, in one budget. */
  separateStreams?: boolean | undefined;
  onStdout?: ((text: string) => void) | undefined;
  onStderr?: ((text: string) => void) | undefined;
}

/** What collectCall needs from whatever tells it where a call ends: the end marker, or the fast path's exit report. */
export interface EndDetector {
  readonly done: boolean;
  /** What the call's end says about the session's state; undefined until it is in (or when it was killed). */
  readonly marker: MarkerPayload | undefined;
  readonly pid: number | undefined;
  /** The wrapper's start time, where its PID line gave one. */
  readonly pidStartTime?: string | undefined;
  push(chunk: Uint8Array): Uint8Array;
  flush(): Uint8Array;
}

export interface RunOutcome {
  text: string;
  truncated: boolean;
  /** With separateStreams: each stream's own text. */
  stdout?: string;
  stderr?: string;
  exitCode: number;
  /** What the end marker said; undefined when none came (or the call was stopped). */
  marker: MarkerPayload | undefined;
  timedOut: boolean;
  interrupted: boolean;
}

/** The session's options a call's collection uses. */
export interface CollectSettings {
  maxOutputBytes: number;
  outputHeadFraction: number;
  killGraceMs: number;
}

/** After the process exits, how long to wait for the rest of its output when no marker came (Transport.outputAfterExitMs). */
const DRAIN_AFTER_EXIT_MS = 250;
/** After the kill rounds, how long to wait for an exit before giving up on the process. */
const GIVE_UP_AFTER_KILL_MS = 5000;
/** How long the kill rounds themselves may take before the call answers anyway (a backend that stopped answering). */
const KILL_ROUNDS_GIVE_UP_MS = 60_000;

export function collectCall(
  transport: Transport,
  handle: ProcessHandle,
  settings: CollectSettings,
  limits: CallLimits,
  closing: AbortSignal,
  scanner: EndDetector,
  /** With separateStreams: where the handle's stderr ends (its own keyed marker, or the fast path's report). */
  stderrScanner?: EndDetector,
): Promise<RunOutcome> {
  const apart = limits.separateStreams === true;
  if (apart && (handle.stderr === undefined || stderrScanner === undefined)) {
    handle.kill();
    return Promise.reject(
      new UnsupportedError(`The ${transport.name} backend cannot keep stderr apart from stdout`, {
        backend: transport.name,
      }),
    );
  }
  const collector = apart ? undefined : new OutputCollector(settings.maxOutputBytes, settings.outputHeadFraction);
  const streams = apart ? new StreamsCollector(settings.maxOutputBytes, settings.outputHeadFraction) : undefined;
  // StringDecoder, not TextDecoder: the same text (a leading BOM kept, as in the result), several times faster streaming.
  const decoder = limits.onOutput && !apart ? new StringDecoder("utf8") : undefined;
  const streamDecoders = apart ? streamListeners(limits) : undefined;
  let finished = false;
  const emit = (bytes: Uint8Array, stream: StreamName = "stdout"): void => {
    if (finished || bytes.length === 0) return;
    if (streams) {
      streams.push(stream, bytes);
      streamDecoders![stream]?.(bytes);
    } else collector!.push(bytes);
    if (decoder) {
      const text = decoder.write(bytes);
      if (text) limits.onOutput!(text);
    }
  };

  return new Promise<RunOutcome>((resolve, reject) => {
    let exitCode: number | undefined;
    let ended = false;
    let stopReason: "timeout" | "interrupt" | undefined;
    const timers: NodeJS.Timeout[] = [];
    const later = (ms: number, fn: () => void): void => {
      // Node timers hold at most 2^31-1 ms (24.8 days); longer means "no limit" in practice.
      timers.push(setTimeout(fn, Math.min(ms, 2 ** 31 - 1)));
    };

    /** Set while a stopped call's processes are being killed: its result waits for that. */
    let killing: Promise<void> | undefined;
    let killed = false;

    const finish = (force = false): void => {
      if (finished) return;
      // A stopped call answers only once its processes are gone: the next
      // command must not find them (a forced finish gives up waiting).
      if (killing !== undefined && !killed && !force) return;
      emit(scanner.flush());
      if (apart) emit(stderrScanner!.flush(), "stderr");
      finished = true;
      for (const timer of timers) clearTimeout(timer);
      limits.signal?.removeEventListener("abort", onAbort);
      closing.removeEventListener("abort", onAbort);
      if (decoder) {
        const rest = decoder.end();
        if (rest) limits.onOutput!(rest);
      }
      streamDecoders?.end();
      const split = streams?.finish();
      const collected = split?.output ?? collector!.finish();
      resolve({
        text: collected.text,
        truncated: collected.truncated,
        ...(split === undefined ? {} : { stdout: split.stdout.text, stderr: split.stderr.text }),
        exitCode: stopReason === "timeout" ? 124 : stopReason === "interrupt" ? 130 : (exitCode ?? 1),
        marker: stopReason === undefined ? scanner.marker : undefined,
        timedOut: stopReason === "timeout",
        interrupted: stopReason === "interrupt",
      });
    };
    /**
     * The drain after an exit ends only after one more poll for I/O. A process descheduled for longer than the drain
     * (a loaded machine) runs its timers first when it wakes, before it reads output already waiting in the pipe:
     * the call then ended without its output and its marker (an empty reply, CI at load 38). setImmediate runs after
     * that poll, and what it read finishes the call by itself.
     */
    const finishAfterIo = (): void => {
      setImmediate(() => finish());
    };
    // Completion is the process exit plus the end marker (or the end of the
    // stream), never EOF alone: a backgrounded child may hold the pipe forever.
    // The other stream of a call with separateStreams: its own end (marker, report or the stream's end) counts too.
    let stderrEnded = !apart;
    const check = (): void => {
      if (exitCode !== undefined && (scanner.done || ended) && (!apart || stderrScanner!.done || stderrEnded)) finish();
    };

    const kill = async (signal: "TERM" | "KILL"): Promise<boolean> => {
      try {
        if (transport.killTree)
          return (
            (await transport.killTree(handle, {
              signal,
              remotePid: scanner.pid,
              remoteStartTime: scanner.pidStartTime,
              graceMs: grace,
            })) === true
          );
      } catch {
        // the backend could not be asked: stop at least the local end
      }
      handle.kill();
      return false;
    };
    const grace = settings.killGraceMs;
    const stop = (reason: "timeout" | "interrupt"): void => {
      if (stopReason !== undefined || finished) return;
      stopReason = reason;
      // TERM escalates to KILL inside the backend after the grace; a second
      // KILL round follows unless the backend saw everything gone. Both run
      // whether or not the wrapper itself is still alive: a child that
      // ignores TERM outlives its wrapper.
      killing = (async () => {
        if (!(await kill("TERM"))) await kill("KILL");
      })();
      void killing.finally(() => {
        killed = true;
        if (exitCode !== undefined) later(ended || scanner.done ? 0 : DRAIN_AFTER_EXIT_MS, finishAfterIo);
        later(GIVE_UP_AFTER_KILL_MS, () => finish(true));
      });
      // The wait for an exit starts once the kill rounds are done: on a loaded machine a round inside a box can take
      // longer than the grace, and a call that answered then would leave the next command its processes (CI, the
      // Modal stand-in). Only a backend that never answers its kill is given up on sooner.
      later(grace + KILL_ROUNDS_GIVE_UP_MS, () => finish(true));
    };
    const onAbort = (): void => stop("interrupt");

    later(limits.timeoutMs, () => stop("timeout"));
    limits.signal?.addEventListener("abort", onAbort, { once: true });
    closing.addEventListener("abort", onAbort, { once: true });
    // A signal that fired while the call was being set up (execute() awaits before it gets here) fires no event:
    // the call was started all the same, so it is stopped the same way, tree and all.
    if (limits.signal?.aborted === true || closing.aborted) stop("interrupt");

    void (async () => {
      try {
        for await (const chunk of handle.output) {
          emit(scanner.push(chunk));
          if (scanner.done) check();
        }
      } catch {
        // A broken stream ends the output; the exit code still decides.
      }
      ended = true;
      check();
    })();
    if (apart)
      void (async () => {
        try {
          for await (const chunk of handle.stderr!) {
            emit(stderrScanner!.push(chunk), "stderr");
            if (stderrScanner!.done) check();
          }
        } catch {
          // as above
        }
        stderrEnded = true;
        check();
      })();

    handle.wait().then(
      (code) => {
        exitCode = code;
        check();
        // The output may still be on its way: the end marker (or the stream's end) finishes earlier.
        if (!finished) later(transport.outputAfterExitMs ?? DRAIN_AFTER_EXIT_MS, finishAfterIo);
      },
      (error: unknown) => {
        if (finished) return;
        finished = true;
        for (const timer of timers) clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * With separateStreams, each stream through a decoder of its own (a character
 * cut by a chunk of the other stream stays whole), its text to its listener
 * and to onOutput.
 */
function streamListeners(
  limits: CallLimits,
): Partial<Record<StreamName, (bytes: Uint8Array) => void>> & { end(): void } {
  const ends: (() => void)[] = [];
  const listener = (listen: ((text: string) => void) | undefined) => {
    if (listen === undefined && limits.onOutput === undefined) return undefined;
    const decoder = new StringDecoder("utf8");
    const deliver = (text: string): void => {
      if (!text) return;
      listen?.(text);
      limits.onOutput?.(text);
    };
    ends.push(() => deliver(decoder.end()));
    return (bytes: Uint8Array): void => deliver(decoder.write(bytes));
  };
  return {
    stdout: listener(limits.onStdout),
    stderr: listener(limits.onStderr),
    end: () => ends.forEach((end) => end()),
  };
}
