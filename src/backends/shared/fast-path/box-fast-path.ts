/**
 * One session's fast path in a box reached through execs (a Docker
 * container, an Apptainer instance, a Modal or Daytona sandbox;
 * docs/fast-path.md): the shared runner, told how to copy the static helper
 * into the box (once per box) and start it on one exec. A call's kill ends
 * with the sweep the plain path runs, through a control exec: the backend
 * gives the channel (`sweep` and `killGroups`), or its remote-tree killer.
 */

import type { SweepResult, SweepTarget } from "../../../core/sweep-script.js";
import type { KillSignal } from "../../../core/transport.js";
import type { RemoteTreeKiller } from "../remote-tree.js";
import { HelperUnsupported, installBoxHelper, startBoxHelper, type BoxExec } from "./box-helper.js";
import { FastPathRunner, type FastPathHost, type RunningCall } from "./fast-path-runner.js";
import { staticHelper, type StaticHelper } from "./helper-path.js";
import { NO_STATIC_HELPER, warnUnavailable } from "./unavailable.js";

interface BoxFastPathCommon {
  box: BoxExec;
  /** The session's copies of the helper, held by the backend: a fast path started afresh (a rollback) reuses them. */
  copies: BoxCopies;
  /** Which box is running now (undefined: none); a new box gets its own copy of the helper. */
  currentBox(): string | undefined;
  /** "the Modal sandbox": for messages. */
  where: string;
  tempDir: string;
  sessionMark: string;
  /** KILL for these process groups inside the box (a job whose helper died). */
  killGroups(pids: number[]): Promise<unknown>;
  /** True while the whole box is frozen from outside (a paused container: its helper's silence is not its own). */
  frozen?(): Promise<boolean>;
  /** A box's files survive its helper (a container): a helper started again reuses the copy. */
  keepsCopy?: boolean;
  /** Told where the helper was copied in the current box (the backend removes it from a box that outlives it). */
  onCopied?(path: string): void;
}

/** How a call's kill sweeps the box: with the backend's own sweep and bookkeeping, or with its remote-tree killer. */
type BoxKill =
  | {
      sweep(target: SweepTarget, signal: KillSignal, graceMs: number, running: RunningCall): Promise<SweepResult>;
      /** The backend's bookkeeping of a call (its groups for close). */
      adopt?: FastPathHost["adopt"];
      killer?: undefined;
    }
  /** The killer's guard; the job's group noted as a leader, so close() finds what the job left in it. */
  | { killer: RemoteTreeKiller; sweep?: undefined; adopt?: undefined };

export type BoxFastPathOptions = BoxFastPathCommon & BoxKill;

/** Undefined when the static helper was not built: every call then takes the plain path. */
export function boxFastPath(options: BoxFastPathOptions): FastPathRunner | undefined {
  const helper = staticHelper();
  if (helper === undefined) {
    warnUnavailable(NO_STATIC_HELPER);
    return undefined;
  }
  const copies = options.copies;
  const runner: FastPathRunner = new FastPathRunner({
    sessionMark: options.sessionMark,
    // A helper still being copied in or started would hold the call back longer than a plain exec takes.
    queueWhileStarting: false,
    start: (snapshot) => {
      const box = options.currentBox();
      if (box === undefined || copies.unsupported(box)) return undefined;
      const path = copies.of(box, helper);
      void path.then(
        (copied) => options.onCopied?.(copied),
        () => undefined,
      );
      const stream = startBoxHelper(
        options.box,
        path.then((copied) => ({
          helper: copied,
          snapshot,
          workDir: options.tempDir,
          sessionMark: options.sessionMark,
        })),
      );
      // A box restarted under the same name may have lost its /tmp: the next start copies again. A helper
      // stopped on purpose (a rollback, close) leaves the copy where it is, for the next fast path.
      if (options.keepsCopy !== true) void stream.closed.then(() => runner.stopped || copies.forget(box));
      const frozen = options.frozen;
      return frozen === undefined ? stream : Object.assign(stream, { frozen: () => frozen() });
    },
    killGroup: (pid) => void options.killGroups([pid]).catch(() => undefined),
    // The copy the helper runs from, made now if the helper has not started yet; none when it cannot be made.
    helperPath: async () => {
      const box = options.currentBox();
      if (box === undefined || copies.unsupported(box)) return undefined;
      const copied = await copies.of(box, helper).catch(() => undefined);
      if (copied !== undefined) options.onCopied?.(copied);
      return copied;
    },
    ...(options.killer === undefined ? { sweep: options.sweep, adopt: options.adopt } : killerKill(options.killer)),
  });
  return runner;
}

/** A call's kill and bookkeeping through the backend's remote-tree killer, which remembers its own hits per handle. */
function killerKill(killer: RemoteTreeKiller): Pick<FastPathHost, "sweep" | "adopt"> {
  return {
    adopt: (call, marks) => {
      // The job leads its group: a child that emptied its environment (no mark) is found there at close.
      call.onStart = (pid) => killer.noteLeader(pid);
      return killer.guard(call, marks, { watchPids: false });
    },
    sweep: async (_target, signal, graceMs, { handle, call }) => ({
      clean: await killer.kill(handle, signal, call.pid, graceMs),
      hit: [],
    }),
  };
}

/**
 * The helper's copy in the current box: made once per box, made again after
 * a failure. The backend holds it for the whole session, so the fast path
 * started afresh after a rollback runs the same copy (the session's one).
 */
export class BoxCopies {
  readonly #box: BoxExec;
  readonly #tempDir: string;
  readonly #where: string;
  #copy: { box: string; path: Promise<string> } | undefined;
  /** The copy's path once it is there, with its box. */
  #made: { box: string; path: string } | undefined;
  readonly #unsupported = new Set<string>();

  constructor(box: BoxExec, tempDir: string, where: string) {
    this.#box = box;
    this.#tempDir = tempDir;
    this.#where = where;
  }

  /** True when the helper can never run in this box (another architecture with no helper built for it). */
  unsupported(box: string): boolean {
    return this.#unsupported.has(box);
  }

  of(box: string, helper: StaticHelper): Promise<string> {
    if (this.#copy?.box === box) return this.#copy.path;
    const path = installBoxHelper(this.#box, helper, this.#tempDir, this.#where);
    const copy = { box, path };
    this.#copy = copy;
    path.then(
      (made) => (this.#made = { box, path: made }),
      () => undefined,
    );
    path.catch((error: unknown) => {
      if (error instanceof HelperUnsupported) this.#unsupported.add(box);
      // A failed copy is tried again at the helper's next start.
      if (this.#copy === copy) this.#copy = undefined;
    });
    return path;
  }

  forget(box: string): void {
    if (this.#copy?.box === box) this.#copy = undefined;
  }

  /** The directory of the copy made in this box, once it is there (the session removes it at close). */
  madeIn(box: string | undefined): string | undefined {
    const made = this.#made;
    return made === undefined || made.box !== box ? undefined : made.path.slice(0, made.path.lastIndexOf("/"));
  }
}
