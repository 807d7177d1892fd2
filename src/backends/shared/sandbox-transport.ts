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

import type { KillSignal, ProcessHandle, RunOptions, Transport } from "../../core/transport.js";
import { RemoteTreeKiller } from "./remote-tree.js";

export abstract class SandboxTransport implements Transport {
  readonly name: string;
  readonly stdinMode = "pipe";
  readonly cwdSource = "marker";
  readonly needsRemotePid = true;
  readonly tempDir = "/tmp";
  readonly #killer: RemoteTreeKiller;

  protected constructor(name: string) {
    this.name = name;
    this.#killer = new RemoteTreeKiller(name, (script) => this.control(script));
  }

  abstract start(): Promise<void>;
  abstract runBash(script: string, options: RunOptions): ProcessHandle;
  abstract stop(): Promise<void>;

  /** Runs a small bash script inside the box (the kill script, file-sync steps) and returns its merged output. */
  protected abstract control(script: string): Promise<{ exitCode: number; output: string }>;

  async killTree(handle: ProcessHandle, signal: KillSignal, remotePid: number | undefined): Promise<void> {
    await this.#killer.kill(handle, signal, remotePid);
  }

  /** What runBash returns: the handle, with its exit held back until any kill of its tree has finished. */
  protected guard<H extends ProcessHandle>(handle: H): H {
    return this.#killer.guard(handle);
  }
}
