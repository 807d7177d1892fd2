/**
 * The remote process groups an ssh session ends at close: those of calls
 * whose outer shell (or helper job) still runs, and those of finished calls,
 * which may have left background children behind. The owner watchdog hears
 * of each (`a` running, `f` finished), to do the same if this process dies.
 */

import type { OwnerWatchdog } from "../shared/owner-watchdog.js";
import { LIVE_GROUPS_LINE } from "./remote-record.js";

/** Groups remembered for cleanup at close; the oldest are forgotten past this. */
const MAX_GROUPS = 10_000;

export class RemoteGroups {
  readonly #active = new Set<number>();
  /** Finished groups, each with the session it lives in (the group itself for a plain call; the helper's for a fast-path job). */
  readonly #finished = new Map<number, number>();
  readonly #watchdog: () => OwnerWatchdog | undefined;

  constructor(watchdog: () => OwnerWatchdog | undefined) {
    this.#watchdog = watchdog;
  }

  started(group: number): void {
    this.#active.add(group);
    this.#watchdog()?.addGroup(`a${group}`);
  }

  /** `session`: the session the group lives in, when it does not lead its own (a fast-path job's). */
  finished(group: number, session = group): void {
    const watchdog = this.#watchdog();
    this.#active.delete(group);
    this.#finished.set(group, session);
    watchdog?.forgetGroup(`a${group}`);
    watchdog?.addGroup(`f${group}`);
    if (this.#finished.size > MAX_GROUPS) {
      const oldest = this.#finished.keys().next().value!;
      this.#finished.delete(oldest);
      watchdog?.forgetGroup(`f${oldest}`);
    }
  }

  /**
   * The close's lines, which forget the groups. A finished call's group is
   * killed only while its leader (the outer shell, dead by now) has not been
   * replaced: PIDs wrap quickly (often at 32768), and a reused one may lead
   * an unrelated session. Entries are GROUP:SESSION (a fast-path job's group
   * lives in its helper's session), or GROUP alone for a group that leads its
   * own session (a plain call's).
   */
  takeCleanup(): string[] {
    const pairs = [...this.#finished].map(([group, session]) => `${group}:${session}`);
    const lines = [
      LIVE_GROUPS_LINE,
      `for e in ${pairs.join(" ")}; do g=\${e%%:*}; [ -e /proc/$g ] && continue; case "$live" in *" $e "*) kill -s KILL -- -$g 2>/dev/null;; esac; done`,
      ...[...this.#active].map((group) => `kill -s KILL -- -${group} 2>/dev/null`),
    ];
    this.#active.clear();
    this.#finished.clear();
    return lines;
  }
}
