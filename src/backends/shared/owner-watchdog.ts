/**
 * Ends a session whose owner (this Node process) died without close(): a
 * SIGKILL, an OOM kill or a crash skips every `finally`, and the session's
 * processes, state files, ssh master and container would live on.
 *
 * One tiny bash per session, in a process group and session of its own (a
 * signal to the owner's group or terminal does not reach it), reads a pipe
 * from the owner. The owner tells it which process groups the session has
 * (`+PGID`, `-PGID`) and, on a normal close, to go away (`q`). When the pipe
 * hits EOF instead, the owner is gone (the kernel closes its end however the
 * process died) and the watchdog runs the backend's cleanup script with the
 * remembered groups as its arguments. It costs one process per session and
 * one short write per call; it polls nothing.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { withoutCredentials } from "../../core/credentials.js";

/** Builtins only, until the cleanup runs: PATH may not even be usable later. */
const WATCHDOG_SCRIPT = `trap '' HUP INT PIPE
cleanup=$1
declare -A groups=()
while IFS= read -r line; do
  case $line in
    +[0-9a-z]*) groups[\${line#+}]=1 ;;
    -[0-9a-z]*) unset "groups[\${line#-}]" ;;
    q) exit 0 ;;
  esac
done
set -- "\${!groups[@]}"
eval "$cleanup"`;

export interface OwnerWatchdogOptions {
  /**
   * Bash run once the owner is gone, with the session's live process groups
   * as "$@". It must not need anything from the owner.
   */
  cleanup: string;
  /** @default "bash" */
  bashPath?: string | undefined;
  /** Extra variables the cleanup needs (e.g. DOCKER_HOST); the owner's environment minus its credentials otherwise. */
  env?: Record<string, string> | undefined;
}

export class OwnerWatchdog {
  readonly #child: ChildProcess;
  #released = false;

  constructor(options: OwnerWatchdogOptions) {
    this.#child = spawn(
      options.bashPath ?? "bash",
      ["--norc", "--noprofile", "-c", WATCHDOG_SCRIPT, "shellwright-watchdog", options.cleanup],
      {
        // Its own session: neither a Ctrl-C at the owner's terminal nor a kill of the owner's group reaches it.
        detached: true,
        stdio: ["pipe", "ignore", "ignore"],
        // SHLVL=1: Debian's bash would read ~/.bashrc with a socket as stdin (see local/transport.ts).
        env: { ...withoutCredentials(process.env), ...options.env, SHLVL: "1" },
      },
    );
    this.#child.on("error", () => undefined); // no bash: the session still works, unguarded
    this.#child.stdin?.on("error", () => undefined); // it was killed: nothing left to tell
    this.#child.unref();
    (this.#child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  }

  /** The watchdog's pid (tests check that it is gone after close). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** A process group the session started (a number, or a number after a lowercase tag the cleanup understands). */
  addGroup(group: number | string): void {
    this.#send(`+${group}`);
  }

  /** A group known to be empty: never signalled (its id may be reused). */
  forgetGroup(group: number | string): void {
    this.#send(`-${group}`);
  }

  /** The owner cleaned up (or means the session to outlive it): the watchdog exits without doing anything. */
  release(): void {
    if (this.#released) return;
    this.#send("q");
    this.#released = true;
    this.#child.stdin?.end();
  }

  #send(line: string): void {
    if (!/^(?:[+-][a-z]*[0-9]+|q)$/.test(line)) return;
    if (this.#released || !this.#child.stdin?.writable) return;
    this.#child.stdin.write(`${line}\n`);
  }
}
