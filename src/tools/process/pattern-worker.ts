/**
 * Where `wait`'s patterns are matched: a worker thread per session, started
 * at its first pattern wait and ended after a minute without one (or with the
 * session). A pattern comes from the model, so it is matched with RE2 in
 * linear time (pattern-scan.ts), and on a thread of its own: however slow a
 * pattern is, the owner's event loop, and with it every other session of an
 * MCP server or a gateway, keeps running, and the wait's timeout holds. One
 * session's pattern cannot delay another session's.
 */

import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Environment } from "../../core/environment.js";
import { InvalidOptionError, ProcessError } from "../../core/errors.js";
import { patternWorkerMain, type ScanLimits, type ScanReply, type ScanRequest } from "./pattern-scan.js";

/** The windows the worker scans (pattern-scan.ts); docs/tools.md states the overlap and the backlog. */
export const SCAN_LIMITS: ScanLimits = {
  overlapChars: 32 * 1024,
  sliceChars: 256 * 1024,
  backlogChars: 8 * 1024 * 1024,
  trickleIntervalMs: 10,
};

/** A worker without a pattern wait for this long ends (a new wait starts another). */
const IDLE_MS = 60_000;

/** One pending wait's pattern, fed with the output as it arrives. */
export interface PatternWatch {
  feed(text: string): void;
  /** The output has ended: resolves once all of it was matched (true when it matched). */
  flush(): Promise<boolean>;
  /** Characters that arrived faster than they could be matched and were skipped. */
  readonly skippedChars: number;
  stop(): void;
}

interface WatchState {
  onMatch: () => void;
  onFailure: (error: Error) => void;
  added?: { resolve: () => void; reject: (error: Error) => void };
  flushed?: (matched: boolean) => void;
  skippedChars: number;
}

const workers = new WeakMap<Environment, PatternWorker>();

/** The session's pattern worker (the thread itself starts with its first watch). */
export function patternWorker(session: Environment): PatternWorker {
  let worker = workers.get(session);
  if (worker === undefined) {
    const created = new PatternWorker();
    session.beforeClose(() => created.close());
    workers.set(session, created);
    worker = created;
  }
  return worker;
}

export class PatternWorker {
  #thread: Worker | undefined;
  #nextId = 1;
  readonly #watches = new Map<number, WatchState>();
  #idle: ReturnType<typeof setTimeout> | undefined;

  /**
   * Starts matching `source` (a JavaScript regular expression; `flags` as a
   * RegExp's: i, m and s count) against `text` and what is fed after it.
   * Rejects with InvalidOptionError when RE2 cannot take the pattern.
   */
  async watch(
    source: string,
    flags: string,
    text: string,
    onMatch: () => void,
    onFailure: (error: Error) => void,
  ): Promise<PatternWatch> {
    const thread = this.#start();
    const id = this.#nextId++;
    const state: WatchState = { onMatch, onFailure, skippedChars: 0 };
    this.#watches.set(id, state);
    thread.ref();
    const post = (message: ScanRequest): void => {
      if (this.#watches.has(id)) thread.postMessage(message);
    };
    const stop = (): void => {
      post({ type: "drop", id });
      this.#forget(id);
    };
    try {
      await new Promise<void>((resolve, reject) => {
        state.added = { resolve, reject };
        thread.postMessage({ type: "add", id, source, flags, text } satisfies ScanRequest);
      });
    } catch (error) {
      this.#forget(id);
      throw error;
    }
    // What arrives within one turn of the event loop goes to the thread as one message.
    let queued: string[] = [];
    const send = (): void => {
      const text = queued.join("");
      queued = [];
      post({ type: "data", id, text });
    };
    return {
      feed: (more) => {
        if (queued.push(more) === 1) setImmediate(send);
      },
      flush: () =>
        new Promise<boolean>((resolve) => {
          if (!this.#watches.has(id)) return resolve(false);
          state.flushed = resolve;
          if (queued.length > 0) send();
          post({ type: "flush", id });
        }),
      get skippedChars() {
        return state.skippedChars;
      },
      stop,
    };
  }

  /** Ends the thread; pending watches fail. */
  async close(): Promise<void> {
    const thread = this.#thread;
    this.#thread = undefined;
    if (this.#idle !== undefined) clearTimeout(this.#idle);
    this.#fail(new ProcessError("The session closed while a wait with a pattern was pending."));
    await thread?.terminate();
  }

  #start(): Worker {
    if (this.#idle !== undefined) clearTimeout(this.#idle);
    this.#idle = undefined;
    if (this.#thread !== undefined) return this.#thread;
    const re2 = createRequire(import.meta.url).resolve("re2js");
    const source = `(${patternWorkerMain.toString()})(require("node:worker_threads").parentPort, require(${JSON.stringify(re2)}), ${JSON.stringify(SCAN_LIMITS)});`;
    // The script is CommonJS; a parent started with --input-type=module would otherwise pass that flag on.
    const thread = new Worker(source, { eval: true, execArgv: [] });
    thread.on("message", (reply: ScanReply) => this.#reply(reply));
    const failed = (error: Error): void => {
      if (this.#thread !== thread) return;
      this.#thread = undefined;
      this.#fail(new ProcessError(`Matching the pattern failed: ${error.message}`, { cause: error }));
    };
    thread.on("error", failed);
    thread.on("exit", (code) => failed(new Error(`the pattern worker exited with code ${code}`)));
    // Held only while a watch is pending (ref in watch, unref in #forget): an idle thread must not keep the owner alive (a CLI
    // that left its named session open never exited). After the listeners, which ref the port again.
    thread.unref();
    this.#thread = thread;
    return thread;
  }

  #reply(reply: ScanReply): void {
    const state = this.#watches.get(reply.id);
    if (state === undefined) return;
    if (reply.type === "added") {
      if (reply.error === undefined) state.added?.resolve();
      else state.added?.reject(new InvalidOptionError("pattern", reply.error));
      state.added = undefined;
    } else if (reply.type === "matched") {
      this.#forget(reply.id);
      state.flushed?.(true);
      state.onMatch();
    } else {
      state.skippedChars = reply.skippedChars;
      state.flushed?.(false);
    }
  }

  #fail(error: Error): void {
    const states = [...this.#watches.values()];
    this.#watches.clear();
    this.#thread?.unref();
    for (const state of states) {
      if (state.added !== undefined) state.added.reject(error);
      else state.onFailure(error);
    }
  }

  #forget(id: number): void {
    this.#watches.delete(id);
    if (this.#watches.size > 0 || this.#thread === undefined) return;
    const thread = this.#thread;
    thread.unref();
    this.#idle = setTimeout(() => {
      if (this.#thread !== thread || this.#watches.size > 0) return;
      this.#thread = undefined;
      void thread.terminate();
    }, IDLE_MS);
    this.#idle.unref();
  }
}
