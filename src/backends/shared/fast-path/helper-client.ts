/**
 * Node's end of one running fast-path helper: sends run and kill requests,
 * routes the helper's frames to the calls, and knows whether its launcher is
 * ready. When the helper's stream ends (it died, or was killed by a
 * command), every call still open ends too: started ones as killed by the
 * helper's death (their groups are killed by `onOrphan`), the others as
 * "not started", for the session to run on the plain path.
 */

import type { Readable, Writable } from "node:stream";
import { constants as osConstants } from "node:os";
import type { FastCallEnd, FastCallHandle } from "../../../core/transport.js";
import { CallOutput } from "./call-output.js";
import { encodeFrame, encodeRun, FrameDecoder, type Frame } from "./frames.js";

/** The byte stream to a helper, however the backend carries it. */
export interface HelperStream {
  readonly input: Writable;
  readonly output: Readable;
  /** Resolves when the helper is gone (its stream ended or its process exited). */
  readonly closed: Promise<void>;
  /** Best effort, never throws. */
  kill(): void;
  /** Keep this process alive while calls are open (true), not while idle (false). */
  hold?(busy: boolean): void;
}

export class FastCall implements FastCallHandle {
  readonly id: number;
  readonly output: CallOutput;
  readonly end: Promise<FastCallEnd>;
  /** The job's pid (its process group), once the helper reported it. */
  pid: number | undefined;
  /** Told the job's pid as soon as the helper reports it (the transport records the group for whoever cleans up). */
  onStart: ((pid: number) => void) | undefined;
  #resolve!: (end: FastCallEnd) => void;
  #done = false;
  readonly #client: HelperClient;

  constructor(id: number, client: HelperClient, onBacklog: (full: boolean) => void) {
    this.id = id;
    this.#client = client;
    this.output = new CallOutput(onBacklog);
    this.end = new Promise((resolve) => (this.#resolve = resolve));
  }

  get done(): boolean {
    return this.#done;
  }

  settle(end: FastCallEnd): void {
    if (this.#done) return;
    this.#done = true;
    this.output.end();
    this.#resolve(end);
  }

  wait(): Promise<number> {
    return this.end.then((end) => end.status);
  }

  /** Asks the helper to signal the job's group; resolves once the request is in the helper's pipe. */
  signal(signal: "TERM" | "KILL"): Promise<void> {
    if (this.#done) return Promise.resolve();
    return this.#client.send(encodeFrame("K", this.id, Uint8Array.of(osConstants.signals[`SIG${signal}`])));
  }

  kill(): void {
    void this.signal("KILL");
  }
}

export class HelperClient {
  readonly #stream: HelperStream;
  readonly #calls = new Map<number, FastCall>();
  readonly #decoder = new FrameDecoder();
  readonly #onOrphan: (pid: number) => void;
  #nextId = 1;
  #ready = false;
  #alive = true;
  #paused = new Set<number>();
  /** Resolves when the first launcher said it is ready, false when the helper died first. */
  readonly firstReady: Promise<boolean>;
  #firstReady!: (ready: boolean) => void;

  constructor(stream: HelperStream, onOrphan: (pid: number) => void) {
    this.#stream = stream;
    this.#onOrphan = onOrphan;
    this.firstReady = new Promise((resolve) => (this.#firstReady = resolve));
    // Held while starting, so a caller awaiting readiness keeps this process alive.
    stream.hold?.(true);
    stream.input.on("error", () => undefined);
    stream.output.on("data", (chunk: Buffer) => this.#decoder.push(chunk, (frame) => this.#onFrame(frame)));
    void stream.closed.then(() => this.#gone());
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

  run(script: string, stdin: Uint8Array | undefined): FastCall {
    const id = this.#nextId++;
    const call = new FastCall(id, this, (full) => this.#backlog(id, full));
    this.#calls.set(id, call);
    if (this.#calls.size === 1) this.#stream.hold?.(true);
    void this.send(encodeRun(id, script, stdin));
    return call;
  }

  send(bytes: Buffer): Promise<void> {
    if (!this.#alive) return Promise.resolve();
    return new Promise((resolve) => {
      try {
        this.#stream.input.write(bytes, () => resolve());
      } catch {
        resolve();
      }
    });
  }

  quit(): void {
    void this.send(encodeFrame("Q", 0));
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
        if (!this.#ready && this.#calls.size === 0) this.#stream.hold?.(false);
        this.#ready = true;
        this.#firstReady(true);
        return;
      case "B":
        // A state change or a dead launcher: the helper starts a fresh one and queues requests for it.
        return;
      case "S": {
        const call = this.#calls.get(frame.id);
        if (call && frame.payload.length === 4) {
          call.pid = frame.payload.readUInt32BE(0);
          call.onStart?.(call.pid);
        }
        return;
      }
      case "O":
        // The payload is a view of the stream's chunk, which Node does not reuse.
        this.#calls.get(frame.id)?.output.push(frame.payload);
        return;
      case "X": {
        const call = this.#calls.get(frame.id);
        if (call === undefined) return;
        this.#calls.delete(frame.id);
        if (this.#calls.size === 0) this.#stream.hold?.(false);
        this.#backlog(frame.id, false);
        const text = frame.payload.toString("utf8");
        const [status, committed, killed, started, group] = text.split(" ", 5);
        const cwd = text.split(" ").slice(5).join(" ");
        call.settle({
          status: Number(status),
          committed: committed === "1",
          killed: killed === "1",
          started: started === "1",
          ...(started === "2" ? { uncertain: true } : {}),
          groupLeft: group === "1",
          cwd,
        });
        return;
      }
      default:
        return;
    }
  }

  #gone(): void {
    if (!this.#alive) return;
    // A helper that was ready may have handed a call to its launcher already.
    const wasReady = this.#ready;
    this.#alive = false;
    this.#ready = false;
    this.#firstReady(false);
    for (const call of this.#calls.values()) {
      if (call.pid !== undefined) this.#onOrphan(call.pid);
      const started = call.pid !== undefined;
      call.settle({
        status: 137,
        committed: false,
        killed: false,
        started,
        ...(!started && wasReady ? { uncertain: true } : {}),
        // Its group was just killed (onOrphan).
        groupLeft: false,
        cwd: "",
      });
    }
    this.#calls.clear();
  }
}
