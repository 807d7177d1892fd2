/**
 * One session's fast path in a box reached through execs (an Apptainer
 * instance, a Modal or Daytona sandbox; docs/fast-path.md): copies the static
 * helper into the box once per box, keeps it running on one exec through the
 * shared runner, and gives each call the marks the in-box sweep finds it by.
 * A kill is the helper's `K` frame first (the job will not commit), then the
 * same sweep the plain path runs through a control exec.
 */

import { callMarks, type CallMarks } from "../../../core/call-marks.js";
import type { FastCallHandle, FastCallRequest, FastPath, KillSignal } from "../../../core/transport.js";
import type { RemoteTreeKiller } from "../remote-tree.js";
import { HelperUnsupported, installBoxHelper, startBoxHelper, type BoxExec } from "./box-helper.js";
import { FastPathRunner } from "./fast-path-runner.js";
import { FastCall } from "./helper-client.js";
import { staticHelper } from "./helper-path.js";
import { NO_STATIC_HELPER, warnUnavailable } from "./unavailable.js";
import { markedJob } from "./helper-argv.js";

export interface BoxFastPathOptions {
  box: BoxExec;
  /** Which box is running now (undefined: none); a new box gets its own copy of the helper. */
  currentBox(): string | undefined;
  /** "the Modal sandbox": for messages. */
  where: string;
  tempDir: string;
  sessionMark: string;
  killer: RemoteTreeKiller;
  /** KILL for these process groups inside the box (a job whose helper died). */
  killGroups(pids: number[]): Promise<unknown>;
}

export class BoxFastPath implements FastPath {
  readonly runner: FastPathRunner;
  readonly #options: BoxFastPathOptions;
  readonly #calls = new WeakMap<object, FastCall>();
  #install: { box: string; path: Promise<string> } | undefined;
  readonly #unsupported = new Set<string>();

  /** Undefined when the static helper was not built: every call then takes the plain path. */
  static create(options: BoxFastPathOptions): BoxFastPath | undefined {
    const helper = staticHelper();
    if (helper === undefined) warnUnavailable(NO_STATIC_HELPER);
    return helper === undefined ? undefined : new BoxFastPath(options, helper);
  }

  private constructor(options: BoxFastPathOptions, helper: { path: string; machine: string }) {
    this.#options = options;
    this.runner = new FastPathRunner({
      start: (snapshot) => {
        const box = options.currentBox();
        if (box === undefined || this.#unsupported.has(box)) return undefined;
        const stream = startBoxHelper(
          options.box,
          this.#installed(box, helper).then((path) => ({
            helper: path,
            snapshot,
            workDir: options.tempDir,
            sessionMark: options.sessionMark,
          })),
        );
        // A box restarted under the same name may have lost its /tmp: the next start copies again.
        void stream.closed.then(() => {
          if (this.#install?.box === box) this.#install = undefined;
        });
        return stream;
      },
      onOrphan: (pid) => void options.killGroups([pid]).catch(() => undefined),
    });
  }

  prepare(snapshot: string): void {
    this.runner.prepare(snapshot);
  }

  whenReady(): Promise<boolean> {
    return this.runner.whenReady();
  }

  tryRun(request: FastCallRequest): FastCallHandle | undefined {
    // A helper still being copied in or started would hold the call back longer than a plain exec takes.
    if (!this.runner.ready) {
      if (!this.runner.running) this.runner.prepare(request.snapshot);
      return undefined;
    }
    const marks: CallMarks = callMarks(this.#options.sessionMark);
    const call = this.runner.tryRun({
      ...request,
      script: markedJob(marks.call, request.script),
    });
    if (!(call instanceof FastCall)) return call;
    // The job leads its group: a child that emptied its environment (no mark) is found there at close.
    call.onStart = (pid) => this.#options.killer.noteLeader(pid);
    const handle = this.#options.killer.guard(call, marks, { watchPids: false });
    this.#calls.set(handle, call);
    return handle;
  }

  /** Undefined when the handle is not one of ours. */
  kill(handle: object, signal: KillSignal, graceMs: number | undefined): Promise<boolean> | undefined {
    const call = this.#calls.get(handle);
    if (call === undefined) return undefined;
    return (async () => {
      // The helper signals the job's group first, so a killed call never commits; then the sweep.
      await call.signal(signal);
      return this.#options.killer.kill(handle as FastCallHandle, signal, call.pid, graceMs);
    })();
  }

  stop(): void {
    this.runner.stop();
  }

  #installed(box: string, helper: { path: string; machine: string }): Promise<string> {
    if (this.#install?.box === box) return this.#install.path;
    const path = installBoxHelper(this.#options.box, helper, this.#options.tempDir, this.#options.where);
    const install = { box, path };
    this.#install = install;
    path.catch((error: unknown) => {
      if (error instanceof HelperUnsupported) this.#unsupported.add(box);
      // A failed copy is tried again at the helper's next start.
      if (this.#install === install) this.#install = undefined;
    });
    return path;
  }
}
