/**
 * Commands that print the fast path's processes from inside a call. `$$`
 * would do on the fast path alone, but a command that expands `$$` takes the
 * plain path (src/core/shell-pid.ts). Keep each a simple command: in a
 * pipeline or `$(…)` `$BASHPID` is that subshell's.
 */

/** The launcher that forked this call: the job's parent. Prints the pid and a newline. */
export const LAUNCHER_PID = "cut -d' ' -f4 /proc/$BASHPID/stat";

/** The helper: the launcher's parent (a job inherits the launcher's `$PPID`). */
export const HELPER_PID = "echo $PPID";
