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

import { callMarks, newMarkValue, type CallMarks } from "../../core/call-marks.js";
import type { KillSignal, ProcessHandle, RunOptions, Transport } from "../../core/transport.js";
import { RemoteTreeKiller } from "./remote-tree.js";

export abstract class SandboxTransport implements Transport {
  readonly name: string;
  readonly stdinMode = "pipe";
  readonly cwdSource = "marker";
  readonly needsRemotePid = true;
  readonly tempDir = "/tmp";
  readonly #killer: RemoteTreeKiller;
  readonly #sessionMark = newMarkValue();

  protected constructor(name: string) {
    this.name = name;
    this.#killer = new RemoteTreeKiller(name, (script) => this.control(script));
  }

  abstract start(): Promise<void>;
  abstract runBash(script: string, options: RunOptions): ProcessHandle;
  abstract stop(): Promise<void>;

  /** Runs a small bash script inside the box (the kill script, file-sync steps) and returns its merged output. */
  protected abstract control(script: string): Promise<{ exitCode: number; output: string }>;

  async killTree(
    handle: ProcessHandle,
    signal: KillSignal,
    remotePid: number | undefined,
    graceMs?: number,
  ): Promise<boolean> {
    return this.#killer.kill(handle, signal, remotePid, graceMs);
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
   * At close, before the box is let go: everything the session started dies,
   * also where letting the box go would not kill it (an Apptainer instance's
   * stray session, a fake sandbox). Best effort, never throws.
   */
  protected async killSession(): Promise<void> {
    await this.#killer.killSession(this.#sessionMark).catch(() => undefined);
  }
}
