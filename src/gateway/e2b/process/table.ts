/**
 * A sandbox's processes by pid and tag. Pids are this table's own small
 * numbers, not the backend's: a process run through `execute` has no single
 * pid to show, and one numbering for all keeps `commands.kill(pid)` and
 * `connect(pid)` the same for every kind. Ended processes leave the table.
 */

import { Code, ConnectError } from "@connectrpc/connect";
import type { TokenMask } from "../../token-mask.js";
import { SandboxProcess, type ProcessConfigView } from "./sandbox-process.js";

/** envd's own processes start low; ours start past the numbers a fresh Linux gives its first processes. */
const FIRST_PID = 1000;

export class ProcessTable {
  readonly #byPid = new Map<number, SandboxProcess>();
  #next = FIRST_PID;
  readonly #mask: TokenMask | undefined;

  /** @param mask the gateway's token, masked in every process's output */
  constructor(mask: TokenMask | undefined) {
    this.#mask = mask;
  }

  add(tag: string | undefined, config: ProcessConfigView, pty: boolean): SandboxProcess {
    if (tag !== undefined && this.byTag(tag) !== undefined)
      throw new ConnectError(`A running process already has tag ${JSON.stringify(tag)}`, Code.AlreadyExists);
    const process = new SandboxProcess(this.#next++, tag, config, pty, this.#mask);
    this.#byPid.set(process.pid, process);
    process.watch((update) => {
      if (update.kind === "end") this.#byPid.delete(process.pid);
    });
    return process;
  }

  remove(process: SandboxProcess): void {
    this.#byPid.delete(process.pid);
  }

  running(): SandboxProcess[] {
    return [...this.#byPid.values()];
  }

  byTag(tag: string): SandboxProcess | undefined {
    return this.running().find((process) => process.tag === tag);
  }

  /** The process a selector names, or envd's not_found. */
  find(
    selector: { case: "pid"; value: number } | { case: "tag"; value: string } | { case: undefined },
  ): SandboxProcess {
    if (selector.case === undefined)
      throw new ConnectError("process selector is empty; give a pid or a tag", Code.InvalidArgument);
    const process = selector.case === "pid" ? this.#byPid.get(selector.value) : this.byTag(selector.value);
    if (process === undefined)
      throw new ConnectError(
        `process with ${selector.case} ${JSON.stringify(selector.value)} not found`,
        Code.NotFound,
      );
    return process;
  }

  /** Kills every running process (the sandbox ends); resolves when each was signalled. */
  async killAll(): Promise<void> {
    await Promise.all(this.running().map((process) => process.driver?.signal("SIGKILL").catch(() => undefined)));
  }
}
