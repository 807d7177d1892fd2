/**
 * Killing a command's processes *inside* a backend (an Apptainer instance, a
 * Modal or Daytona sandbox), where we have no process group of our own: the
 * shared sweep (sweep-script.ts) runs in the box through a control exec and
 * takes the wrapper, its descendants and everything carrying the call's mark,
 * however it detached.
 *
 * Killing only the local end (an `apptainer exec` client, an SDK call) leaves
 * the command running; terminating the whole sandbox kills the session. This
 * is the middle way the design asks for.
 */

import { CALL_MARK, SESSION_MARK, type CallMarks } from "../../core/call-marks.js";
import type { KillSignal, ProcessHandle } from "../../core/transport.js";
import { parseSweep, sweepScript } from "../../core/sweep-script.js";
import { SweepHits } from "./sweep-hits.js";
import { WrapperPids } from "./wrapper-pids.js";

/** Runs a small control script inside the backend and returns what it printed. */
export type ControlExec = (script: string) => Promise<{ exitCode: number; output: string }>;

export const DEFAULT_GRACE_MS = 1000;

/** The PIDs a kill script reports it signalled. */
export function parseKilled(output: string): number[] {
  const fromSweep = parseSweep(output).hit.map((entry) => Number(entry.split(":")[0]));
  if (fromSweep.length > 0) return fromSweep;
  const line = output.split("\n").find((l) => l.startsWith("__shellwright_killed:"));
  return (line ?? "")
    .slice("__shellwright_killed:".length)
    .split(/\s+/)
    .map((entry) => Number(entry.split(":")[0]))
    .filter((pid) => Number.isInteger(pid) && pid > 1);
}

/**
 * Per-transport state for in-backend kills: remembers what a round hit, so
 * the KILL that follows it also reaches children that lost their parent.
 */
export class RemoteTreeKiller {
  readonly #exec: ControlExec;
  readonly #backend: string;
  readonly #hits = new SweepHits();
  readonly #marks = new WeakMap<ProcessHandle, CallMarks>();
  /** Kills still running, per handle: the handle's exit waits for them. */
  readonly #inFlight = new WeakMap<ProcessHandle, Promise<unknown>>();
  readonly #leaders = new WrapperPids();

  constructor(backend: string, exec: ControlExec) {
    this.#backend = backend;
    this.#exec = exec;
  }

  /**
   * The handle to give the session: its exit is reported only once any kill in
   * progress has finished, so the session's result never comes back while the
   * tree is still being taken down (the next command must not find it).
   */
  guard<H extends ProcessHandle>(handle: H, marks?: CallMarks, options: { watchPids?: boolean } = {}): H {
    const guarded: H = Object.create(handle) as H;
    // A fast-path call prints no wrapper PID: its output goes through untouched.
    if (options.watchPids !== false)
      Object.defineProperty(guarded, "output", { value: this.#leaders.watch(handle.output) });
    Object.defineProperty(guarded, "wait", {
      value: async () => {
        const code = await handle.wait();
        await this.#inFlight.get(guarded);
        return code;
      },
    });
    // Called on `guarded`, a method that reads a private field of the handle's class (a fast-path call's
    // kill()) would throw a TypeError: this one is the handle's own.
    Object.defineProperty(guarded, "kill", { value: () => handle.kill() });
    if (marks !== undefined) this.#marks.set(guarded, marks);
    return guarded;
  }

  /**
   * Throws when the kill could not be delivered (no PID yet, or the backend did
   * not answer): the caller then falls back to the handle's own kill().
   * Resolves true when the sweep saw nothing of the call left.
   */
  kill(
    handle: ProcessHandle,
    signal: KillSignal,
    rootPid: number | undefined,
    graceMs = DEFAULT_GRACE_MS,
    rootStartTime?: string,
  ): Promise<boolean> {
    const killing = this.#kill(handle, signal, rootPid, graceMs, rootStartTime);
    const previous = this.#inFlight.get(handle);
    this.#inFlight.set(handle, Promise.allSettled([previous, killing]));
    return killing;
  }

  /** A process that leads a group and session of its own for one call (a fast-path job): close() sweeps them. */
  noteLeader(pid: number): void {
    this.#leaders.add(pid);
  }

  /**
   * KILL for everything carrying the session's mark, and for what is left in
   * the groups and sessions its finished wrappers led; `first` runs before,
   * in the same exec (the close's other cleanup, without a round trip of its own).
   */
  async killSession(sessionMark: string, first?: string): Promise<void> {
    const leaders = this.#leaders.all;
    await this.#exec(
      (first === undefined ? "" : `${first}\n`) +
        sweepScript(
          { marks: [`${SESSION_MARK}=${sessionMark}`], groups: leaders, sessions: leaders, deadLeadersOnly: true },
          "KILL",
          0,
        ),
    );
  }

  async #kill(
    handle: ProcessHandle,
    signal: KillSignal,
    rootPid: number | undefined,
    graceMs: number,
    rootStartTime: string | undefined,
  ): Promise<boolean> {
    const marks = this.#marks.get(handle);
    if (rootPid === undefined) {
      // What already started and detached is found by its mark; the rest is
      // the local end's to stop (the session falls back to handle.kill()).
      if (marks !== undefined)
        await this.#exec(sweepScript({ marks: [`${CALL_MARK}=${marks.call}`] }, "KILL", 0)).catch(() => undefined);
      throw new Error(`the ${this.#backend} command has not reported its PID yet, so its process tree cannot be found`);
    }
    const target = { marks: marks === undefined ? [] : [`${CALL_MARK}=${marks.call}`], root: rootPid, rootStartTime };
    const sweep = await this.#hits.sweep(handle, target, async (withHits) => {
      const result = await this.#exec(sweepScript(withHits, signal, graceMs));
      if (result.exitCode !== 0)
        throw new Error(`the kill script exited with ${result.exitCode}: ${result.output.trim().slice(0, 300)}`);
      return parseSweep(result.output);
    });
    return sweep.clean;
  }
}
