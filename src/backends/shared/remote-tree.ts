/**
 * Killing a command's whole process tree *inside* a backend (an Apptainer
 * instance, a Modal or Daytona sandbox), where we have no process group of our
 * own: a bash script walks /proc from the PID the wrapper reported, freezes
 * every descendant with SIGSTOP (so nothing forks or gets reparented away while
 * we look), signals them all, then lets them run to receive it.
 *
 * Killing only the local end (an `apptainer exec` client, an SDK call) leaves
 * the command running; terminating the whole sandbox kills the session. This
 * is the middle way the design asks for.
 */

import type { KillSignal, ProcessHandle } from "../../core/transport.js";

/** Runs a small control script inside the backend and returns what it printed. */
export type ControlExec = (script: string) => Promise<{ exitCode: number; output: string }>;

const KILLED_PREFIX = "__shellwright_killed:";

/**
 * The script. Pure bash builtins plus `kill`, so it works in any image that
 * has bash. `extra` are PIDs signalled earlier (with TERM) that may have been
 * reparented since: the KILL round must still reach them.
 */
export function killTreeScript(rootPid: number, signal: KillSignal, extra: readonly number[] = []): string {
  const roots = [rootPid, ...extra].filter((pid) => Number.isInteger(pid) && pid > 1).join(" ");
  return [
    "set +e",
    `roots="${roots}"`,
    "declare -A seen=() kids=()",
    // One pass over /proc: children of each PID. The comm field may hold spaces
    // or parentheses, so the fields are read after its last ')'.
    "scan() { kids=(); local s line pid rest; for s in /proc/[0-9]*/stat; do",
    '  { IFS= read -r line < "$s"; } 2>/dev/null || continue',
    "  pid=${s#/proc/}; pid=${pid%/stat}; rest=${line##*) }; rest=${rest#* }",
    '  kids[${rest%% *}]+=" $pid"',
    "done; }",
    "frozen=0",
    "for round in 1 2 3 4 5; do",
    "  scan; new=0; queue=()",
    '  for p in $roots; do [[ -d /proc/$p ]] && queue+=("$p"); done',
    "  while ((${#queue[@]})); do",
    '    p=${queue[0]}; queue=("${queue[@]:1}")',
    '    [[ $p == "$$" || $p == 1 ]] && continue',
    '    if [[ -z ${seen[$p]} ]]; then seen[$p]=1; new=1; kill -STOP "$p" 2>/dev/null; fi',
    '    for c in ${kids[$p]}; do [[ -z ${seen[$c]} ]] && queue+=("$c"); done',
    "  done",
    "  ((new)) || break",
    "done",
    'pids="${!seen[*]}"',
    // The wrapper goes first and alone: were a child to die before it, bash
    // would report the child's death ("Terminated") into the output.
    `root=${Number.isInteger(rootPid) && rootPid > 1 ? rootPid : 0}`,
    // A sleep without a fork: read with a timeout from a pipe nobody writes.
    "exec {nap}<> <(:)",
    "running() { local p line rest; for p; do { IFS= read -r line < /proc/$p/stat; } 2>/dev/null || continue; rest=${line##*) }; [[ ${rest%% *} == Z ]] || return 0; done; return 1; }",
    'settle() { local i; for ((i = 0; i < $1; i++)); do running "${@:2}" || return 0; read -t 0.01 -u $nap; done; return 1; }',
    "if [[ -n ${seen[$root]} ]]; then",
    `  kill -${signal} "$root" 2>/dev/null; kill -CONT "$root" 2>/dev/null`,
    '  settle 100 "$root"',
    "fi",
    `[[ -n $pids ]] && { kill -${signal} $pids 2>/dev/null; kill -CONT $pids 2>/dev/null; }`,
    // Return only once they are gone: whoever looks next must not find them.
    // What ignores TERM for a second gets KILL (the session would send KILL
    // only while the wrapper itself lived, and children can outlive it).
    signal === "TERM" ? "settle 100 $pids || { kill -KILL $pids 2>/dev/null; settle 500 $pids; }" : "settle 500 $pids",
    `printf '${KILLED_PREFIX}%s\\n' "$pids"`,
  ].join("\n");
}

/** The PIDs a kill script reports it signalled. */
export function parseKilled(output: string): number[] {
  const line = output.split("\n").find((l) => l.startsWith(KILLED_PREFIX));
  if (line === undefined) return [];
  return line
    .slice(KILLED_PREFIX.length)
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid > 1);
}

/**
 * Per-transport state for in-backend kills: remembers what TERM reached, so
 * the KILL that follows it also hits children that lost their parent.
 */
export class RemoteTreeKiller {
  readonly #exec: ControlExec;
  readonly #backend: string;
  readonly #signalled = new WeakMap<ProcessHandle, number[]>();
  /** Kills still running, per handle: the handle's exit waits for them. */
  readonly #inFlight = new WeakMap<ProcessHandle, Promise<unknown>>();

  constructor(backend: string, exec: ControlExec) {
    this.#backend = backend;
    this.#exec = exec;
  }

  /**
   * Throws when the kill could not be delivered (no PID yet, or the backend did
   * not answer): the caller then falls back to the handle's own kill().
   */
  /**
   * The handle to give the session: its exit is reported only once any kill in
   * progress has finished, so the session's result never comes back while the
   * tree is still being taken down (the next command must not find it).
   */
  guard<H extends ProcessHandle>(handle: H): H {
    const guarded: H = Object.create(handle) as H;
    Object.defineProperty(guarded, "wait", {
      value: async () => {
        const code = await handle.wait();
        await this.#inFlight.get(guarded);
        return code;
      },
    });
    return guarded;
  }

  kill(handle: ProcessHandle, signal: KillSignal, rootPid: number | undefined): Promise<void> {
    const killing = this.#kill(handle, signal, rootPid);
    const previous = this.#inFlight.get(handle);
    this.#inFlight.set(handle, Promise.allSettled([previous, killing]));
    return killing;
  }

  async #kill(handle: ProcessHandle, signal: KillSignal, rootPid: number | undefined): Promise<void> {
    if (rootPid === undefined) {
      throw new Error(`the ${this.#backend} command has not reported its PID yet, so its process tree cannot be found`);
    }
    const before = this.#signalled.get(handle) ?? [];
    const result = await this.#exec(killTreeScript(rootPid, signal, before));
    if (result.exitCode !== 0) {
      throw new Error(`the kill script exited with ${result.exitCode}: ${result.output.trim().slice(0, 300)}`);
    }
    this.#signalled.set(handle, [...new Set([...before, ...parseKilled(result.output)])]);
  }
}
