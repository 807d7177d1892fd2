/**
 * What the transports that run commands inside a box we hold no process group
 * in (an Apptainer instance, a Modal or Daytona sandbox) have in common: the
 * in-band marker for the cwd, stdin on a pipe, /tmp for the session's files,
 * and a kill that walks the process tree inside the box from the PID the
 * wrapper reports (RemoteTreeKiller), through a control exec each backend runs
 * its own way.
 *
 * Written once so the three cannot drift apart on how a kill reaches the tree
 * or on the guard that holds a command's exit until its kill has finished.
 */

import { CALL_MARK, callMarks, newMarkValue, type CallMarks } from "../../core/call-marks.js";
import type { CheckpointSupport } from "../../core/checkpoint-support.js";
import type { FastPath, ProcessHandle, RunOptions, Transport, TreeKill } from "../../core/transport.js";
import { BoxCopies, boxFastPath } from "./fast-path/box-fast-path.js";
import type { BoxExec } from "./fast-path/box-helper.js";
import type { FastPathRunner } from "./fast-path/fast-path-runner.js";
import { RemoteTreeKiller } from "./remote-tree.js";
import { sweepScript } from "../../core/sweep-script.js";
import { shellQuote } from "../../core/script.js";

export abstract class BoxTransport implements Transport {
  readonly name: string;
  readonly stdinMode = "pipe";
  readonly needsRemotePid = true;
  readonly tempDir = "/tmp";
  readonly #killer: RemoteTreeKiller;
  readonly #sessionMark = newMarkValue();
  #fast: FastPathRunner | undefined;
  /** What enableFastPath was given: endProcesses starts it afresh. */
  #fastBox: Parameters<BoxTransport["enableFastPath"]> | undefined;
  /** The session's copy of the helper: kept when endProcesses starts the fast path afresh. */
  #copies: BoxCopies | undefined;
  /** Set by open.ts: checkpoints of the shell state (snapshot-checkpoints.ts) or of the whole sandbox (sandbox-checkpoints.ts). */
  checkpoints: CheckpointSupport | undefined;

  protected constructor(name: string) {
    this.name = name;
    this.#killer = new RemoteTreeKiller(name, (script) => this.control(script));
  }

  abstract start(): Promise<void>;
  abstract runBash(script: string, options: RunOptions): ProcessHandle;
  abstract stop(): Promise<void>;

  /** Runs a small bash script inside the box (the kill script, file-sync steps) and returns its merged output. */
  protected abstract control(script: string): Promise<{ exitCode: number; output: string }>;

  async killTree(handle: ProcessHandle, { signal, remotePid, remoteStartTime, graceMs }: TreeKill): Promise<boolean> {
    return (
      this.#fast?.kill(handle, signal, graceMs) ??
      this.#killer.kill(handle, signal, remotePid, graceMs, remoteStartTime)
    );
  }

  /** The mark every process of this session carries (a copy of its box finds them by it: a fork's, a rollback's). */
  get sessionMark(): string {
    return this.#sessionMark;
  }

  /** The fast path, once a backend turned it on and the static helper was built; else every call takes the plain path. */
  get fastPath(): FastPath | undefined {
    return this.#fast;
  }

  /** The fast path's runner (tests and benchmarks: readiness, killing the helper). */
  get fastPathRunner(): FastPathRunner | undefined {
    return this.#fast;
  }

  /**
   * Turns the fast path on (docs/fast-path.md): the helper runs in the box
   * as one long-lived program started through `box`; `currentBox` names the
   * box running now, so a replaced box gets its own copy.
   */
  protected enableFastPath(box: BoxExec, currentBox: () => string | undefined, where: string): void {
    this.#fastBox = [box, currentBox, where];
    this.#copies ??= new BoxCopies(box, this.tempDir, where);
    this.#fast ??= boxFastPath({
      box,
      copies: this.#copies,
      currentBox,
      where,
      tempDir: this.tempDir,
      sessionMark: this.#sessionMark,
      killer: this.#killer,
      killGroups: (groups) => this.control(sweepScript({ marks: [], groups }, "KILL", 0)),
    });
  }

  /** The marks for one call's launch (bashLaunch); the handle goes through guard() with them. */
  protected newCallMarks(): CallMarks {
    return callMarks(this.#sessionMark);
  }

  /** What runBash returns: the handle, with its exit held back until any kill of its tree has finished. */
  protected guard<H extends ProcessHandle>(handle: H, marks: CallMarks): H {
    return this.#killer.guard(handle, marks);
  }

  /**
   * Ends the session's processes in the box and starts the fast path afresh: a rollback's step before it
   * puts the saved snapshot back (docs/branching.md).
   */
  async endProcesses(): Promise<void> {
    this.#fast?.stop();
    this.#fast = undefined;
    await this.#killer.killSession(this.#sessionMark);
    if (this.#fastBox !== undefined) this.enableFastPath(...this.#fastBox);
  }

  /**
   * At close, before the box is let go: everything the session started dies,
   * also where letting the box go would not kill it (an Apptainer instance's
   * stray session, a fake sandbox). Best effort, never throws.
   */
  protected async killSession(): Promise<void> {
    // The helper first (its channel ends, it kills its launcher); the sweep then takes what its jobs left.
    this.#fast?.stop();
    // Its copy too, in the same exec: a box that outlives the session (a kept sandbox) must not keep it.
    const copy = this.#copies?.madeIn(this.#fastBox?.[1]());
    const remove = [copy === undefined ? undefined : `rm -rf -- ${shellQuote(copy)} 2>/dev/null`, this.closeCleanup()]
      .filter((line) => line !== undefined)
      .join("\n");
    await this.#killer.killSession(this.#sessionMark, remove === "" ? undefined : remove).catch(() => undefined);
  }

  /**
   * KILL for every process of one call, found by its mark however it detached (CallCancel's kill); false when the
   * box did not run the sweep.
   */
  protected async killByMark(marks: CallMarks): Promise<boolean> {
    try {
      return (await this.control(sweepScript({ marks: [`${CALL_MARK}=${marks.call}`] }, "KILL", 0))).exitCode === 0;
    } catch {
      return false;
    }
  }

  /** Shell lines for the close's sweep exec that remove the backend's own files of the session (none by default). */
  protected closeCleanup(): string | undefined {
    return undefined;
  }
}
