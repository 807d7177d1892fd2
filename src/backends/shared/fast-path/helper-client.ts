/**
 * Node's end of one running fast-path helper: sends run and kill requests,
 * routes the helper's frames to the calls, and knows whether its launcher is
 * ready. When the helper's stream ends (it died, or was killed by a
 * command), every call still open ends too: started ones as killed by the
 * helper's death (their groups are killed by `onOrphan`), the others as
 * "not started", for the session to run on the plain path.
 */

import { randomBytes } from "node:crypto";
import { constants as osConstants } from "node:os";
import type { FastCallEnd, FastCallHandle } from "../../../core/transport.js";
import { CallOutput } from "./call-output.js";
import { decodeExit, FrameDecoder, FrameWriter, ProtocolViolation, type Frame } from "./frames.js";
import { KEY_BYTES, REQUEST } from "./protocol.js";
import type { ProcessAttachRequest } from "../../../core/process-channel.js";
import type { HelperProcessChannel } from "./process-channel.js";
import { ProcessChannels } from "./process-channels.js";
import { DEFAULT_TIMING, type HelperFailure, type HelperStream, type HelperTiming } from "./helper-stream.js";

export { GIVE_UP_AFTER_MS, PING_AFTER_MS, RESUME_AFTER_MS } from "./helper-stream.js";
export type { HelperFailure, HelperStream, HelperTiming } from "./helper-stream.js";

export class FastCall implements FastCallHandle {
  readonly id: number;
  readonly output: CallOutput;
  /** Its stderr, when the call asked for it apart ('e' frames). */
  readonly stderr: CallOutput | undefined;
  readonly end: Promise<FastCallEnd>;
  /** The job's pid (its process group), once the helper reported it. */
  pid: number | undefined;
  /** Told the job's pid as soon as the helper reports it (the transport records the group for whoever cleans up). */
  onStart: ((pid: number) => void) | undefined;
  /** Resolves false when the run request never reached the helper's pipe (its reader was gone): it provably never started. */
  sent: Promise<boolean> = Promise.resolve(true);
  #resolve!: (end: FastCallEnd) => void;
  #done = false;
  readonly #client: HelperClient;

  constructor(id: number, client: HelperClient, onBacklog: (full: boolean, stream: number) => void, apart = false) {
    this.id = id;
    this.#client = client;
    this.output = new CallOutput((full) => onBacklog(full, id));
    // Its own backlog key: either stream's reader falling behind pauses the helper, and both must catch up.
    this.stderr = apart ? new CallOutput((full) => onBacklog(full, -id)) : undefined;
    this.end = new Promise((resolve) => (this.#resolve = resolve));
  }

  get done(): boolean {
    return this.#done;
  }

  settle(end: FastCallEnd): void {
    if (this.#done) return;
    this.#done = true;
    this.output.end();
    this.stderr?.end();
    this.#resolve(end);
  }

  wait(): Promise<number> {
    return this.end.then((end) => end.status);
  }

  /** Asks the helper to signal the job's group; resolves once the request is in the helper's pipe. */
  signal(signal: "TERM" | "KILL"): Promise<void> {
    if (this.#done) return Promise.resolve();
    return this.#client
      .send(this.#client.writer.frame(REQUEST.kill, this.id, Uint8Array.of(osConstants.signals[`SIG${signal}`])))
      .then(() => undefined);
  }

  kill(): void {
    void this.signal("KILL");
  }
}

export class HelperClient {
  readonly #stream: HelperStream;
  readonly #calls = new Map<number, FastCall>();
  /** Attached processes (process-channels.ts): apart from the calls, none holds a call's place. */
  readonly #channels = new ProcessChannels(
    (type, id, payload) => {
      // A write waits for its ack: the helper's silence counts from here (an idle PTY's does not).
      if (type === "I" && this.#watch === undefined) this.#lastFrameAt = Date.now();
      const sent = this.send(this.writer.frame(type, id, payload));
      if (type === "I") this.#watchdog();
      return sent;
    },
    () => {
      if (this.#open === 0) this.#stream.hold?.(false);
    },
  );
  readonly #decoder: FrameDecoder;
  readonly writer: FrameWriter;
  readonly #onOrphan: (pid: number) => void;
  readonly #onFailure: (failure: HelperFailure) => void;
  readonly #timing: HelperTiming;
  #lastFrameAt = Date.now();
  #resumed = false;
  /** A frozen() question in flight: the watchdog waits for its answer. */
  #askingFrozen = false;
  #watch: NodeJS.Timeout | undefined;
  #pings = 0;
  #nextId = 1;
  #ready = false;
  #alive = true;
  #paused = new Set<number>();
  /** Resolves when the first launcher said it is ready, false when the helper died first. */
  readonly firstReady: Promise<boolean>;
  #firstReady!: (ready: boolean) => void;

  constructor(
    stream: HelperStream,
    onOrphan: (pid: number) => void,
    onFailure: (failure: HelperFailure) => void = () => undefined,
    timing: Partial<HelperTiming> = {},
  ) {
    this.#timing = { ...DEFAULT_TIMING, ...timing };
    this.#stream = stream;
    this.#onOrphan = onOrphan;
    this.#onFailure = onFailure;
    // A key per helper, sent first: the helper's frames are checked with it, and ours by it.
    const key = randomBytes(KEY_BYTES);
    this.#decoder = new FrameDecoder(key);
    this.writer = new FrameWriter(key);
    this.firstReady = new Promise((resolve) => (this.#firstReady = resolve));
    // Held while starting, so a caller awaiting readiness keeps this process alive.
    stream.hold?.(true);
    stream.input.on("error", () => undefined);
    stream.input.write(key);
    stream.output.on("data", (chunk: Buffer) => {
      if (!this.#alive) return;
      this.#lastFrameAt = Date.now();
      this.#resumed = false;
      try {
        this.#decoder.push(chunk, (frame) => this.#onFrame(frame));
      } catch (error) {
        if (!(error instanceof ProtocolViolation)) throw error;
        this.#fail("violation", `the helper's stream broke the protocol (${error.message})`);
      }
    });
    void stream.closed.then(() => this.#gone());
  }

  /** Gives the helper up: its calls end (started ones as killed), the session goes on without it. */
  #fail(kind: HelperFailure["kind"], message: string): void {
    if (!this.#alive) return;
    const tail = this.#stream.stderrTail?.().trim();
    this.#stream.kill();
    this.#gone();
    this.#onFailure({ kind, message: tail ? `${message}; the helper said: ${tail.slice(-500)}` : message });
  }

  /**
   * While calls are open, a helper that is silent is asked (a ping), then
   * continued from outside (a command may have stopped it: `kill -STOP
   * $PPID`), then given up: no call waits on a helper that cannot answer.
   */
  #watchdog(): void {
    if (this.#watch !== undefined || !this.#alive) return;
    this.#watch = setInterval(() => {
      if (!this.#alive || this.#calls.size + this.#channels.writing === 0) {
        clearInterval(this.#watch);
        this.#watch = undefined;
        return;
      }
      // Paused by us (a call's reader is behind): the helper's silence is ours, not its.
      if (this.#paused.size > 0) {
        this.#lastFrameAt = Date.now();
        return;
      }
      if (this.#askingFrozen) return;
      const silent = Date.now() - this.#lastFrameAt;
      const { pingAfterMs, resumeAfterMs, giveUpAfterMs } = this.#timing;
      if (silent >= giveUpAfterMs) {
        const stuck = (): void =>
          this.#fail("stuck", `the helper did not answer for ${Math.round(silent / 1000)} s (stopped or traced)`);
        if (this.#stream.frozen === undefined) return stuck();
        this.#askingFrozen = true;
        void this.#stream.frozen().then(
          (frozen) => {
            this.#askingFrozen = false;
            // Frozen with its box: the silence starts over, and it is asked again if it lasts.
            if (frozen) this.#lastFrameAt = Date.now();
            else stuck();
          },
          () => {
            this.#askingFrozen = false;
            stuck();
          },
        );
        return;
      }
      if (silent >= resumeAfterMs && !this.#resumed) {
        this.#resumed = true;
        this.#stream.resume?.();
      }
      if (silent >= pingAfterMs) void this.send(this.writer.frame(REQUEST.ping, ++this.#pings));
    }, this.#timing.pingAfterMs / 2);
    this.#watch.unref();
  }

  get alive(): boolean {
    return this.#alive;
  }

  /** The launcher is ready (or restarting after a state change: requests then wait for it in the helper). */
  get ready(): boolean {
    return this.#ready;
  }

  get openCalls(): number {
    return this.#calls.size;
  }

  #requestsSent = 0;

  /** Run requests whose write reached the helper's stream: from then on a lost helper may have run them (tests). */
  get requestsSent(): number {
    return this.#requestsSent;
  }

  run(script: string, stdin: Uint8Array | undefined, separateStreams = false): FastCall {
    const id = this.#nextId++;
    const call = new FastCall(id, this, (full, key) => this.#backlog(key, full), separateStreams);
    this.#calls.set(id, call);
    this.#opened();
    call.sent = this.send(this.writer.run(id, script, stdin, separateStreams));
    void call.sent.then((sent) => {
      if (sent) this.#requestsSent++;
    });
    this.#watchdog();
    return call;
  }

  /**
   * Attaches to a process one of this helper's calls started: its output streams in, its stdin takes writes.
   * Undefined when the request cannot be framed (the caller follows it the `execute` way).
   */
  attach(request: ProcessAttachRequest): HelperProcessChannel | undefined {
    if (!this.#alive) return undefined;
    const channel = this.#channels.open(this.#nextId++, request);
    if (channel === undefined) return undefined;
    this.#opened();
    return channel;
  }

  /** Calls and attached processes open: while there are any, the helper is watched and this process kept alive. */
  get #open(): number {
    return this.#calls.size + this.#channels.size;
  }

  #opened(): void {
    if (this.#open !== 1) return;
    this.#stream.hold?.(true);
    this.#lastFrameAt = Date.now();
  }

  /** Resolves once the bytes are in the helper's pipe (true), or could not be written there (false). */
  send(bytes: Buffer): Promise<boolean> {
    if (!this.#alive) return Promise.resolve(false);
    return new Promise((resolve) => {
      try {
        this.#stream.input.write(bytes, (error) => resolve(error == null));
      } catch {
        resolve(false);
      }
    });
  }

  quit(): void {
    void this.send(this.writer.frame(REQUEST.quit, 0));
    this.#stream.input.end();
  }

  kill(): void {
    this.#stream.kill();
  }

  #backlog(id: number, full: boolean): void {
    if (full) this.#paused.add(id);
    else this.#paused.delete(id);
    if (this.#paused.size > 0) this.#stream.output.pause();
    else this.#stream.output.resume();
  }

  #onFrame(frame: Frame): void {
    switch (frame.type) {
      case "H":
        if (!this.#ready && this.#open === 0) this.#stream.hold?.(false);
        this.#ready = true;
        this.#firstReady(true);
        return;
      case "B":
        // A state change or a dead launcher: the helper starts a fresh one and queues requests for it.
        return;
      case "P":
      case "A":
        return;
      case "S": {
        const call = this.#calls.get(frame.id);
        if (call && frame.payload.length === 4) {
          call.pid = frame.payload.readUInt32BE(0);
          call.onStart?.(call.pid);
        }
        return;
      }
      case "O": {
        // The payload is a view of the stream's chunk, which Node does not reuse.
        const call = this.#calls.get(frame.id);
        // Output for no open call: the helper never sends it (ids are never reused).
        if (call === undefined) throw new ProtocolViolation(`output for call ${frame.id}, which is not open`);
        call.output.push(frame.payload);
        return;
      }
      case "e": {
        const call = this.#calls.get(frame.id);
        if (call?.stderr === undefined)
          throw new ProtocolViolation(`stderr for call ${frame.id}, which did not ask for it`);
        call.stderr.push(frame.payload);
        return;
      }
      case "X": {
        const call = this.#calls.get(frame.id);
        if (call === undefined) throw new ProtocolViolation(`an exit for call ${frame.id}, which is not open`);
        const end = decodeExit(frame.payload);
        this.#calls.delete(frame.id);
        if (this.#open === 0) this.#stream.hold?.(false);
        this.#backlog(frame.id, false);
        this.#backlog(-frame.id, false);
        call.settle(end);
        return;
      }
      default:
        this.#channels.onFrame(frame);
        return;
    }
  }

  #gone(): void {
    if (!this.#alive) return;
    if (this.#watch !== undefined) clearInterval(this.#watch);
    this.#watch = undefined;
    // A helper that was ready may have handed a call to its launcher already.
    const wasReady = this.#ready;
    this.#alive = false;
    this.#ready = false;
    this.#firstReady(false);
    for (const call of this.#calls.values()) {
      if (call.pid !== undefined) this.#onOrphan(call.pid);
      const started = call.pid !== undefined;
      const settle = (uncertain: boolean): void =>
        call.settle({
          status: 137,
          committed: false,
          killed: false,
          started,
          ...(uncertain ? { uncertain: true } : {}),
          // Its group was just killed (onOrphan).
          groupLeft: false,
        });
      // A request whose write failed (the helper's client had exited: EPIPE) never left this process, so it never
      // ran: the session runs it on the plain path. One that reached the pipe may have run.
      if (!started && wasReady) void call.sent.then(settle);
      else settle(false);
    }
    this.#calls.clear();
    this.#channels.loseAll();
  }
}
