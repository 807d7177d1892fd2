/**
 * The shell command line of one call in an SDK sandbox whose commands hand
 * their output over as decoded text (Daytona's session commands, E2B's
 * commands): pure text, so its composition is tested as text.
 */

import { shellQuote } from "../../core/script.js";

/**
 * The shell command that runs one `bash -c` in the sandbox. Pure, so the
 * timeout composition can be tested as text: `timeout` wraps the whole launch,
 * the session snapshot is sourced inside it, and its exit code passes through.
 *
 * With `copy`, the call's stdout goes to that file (the exact bytes) and a
 * `tail --pid` of it, run in the foreground, is what the logs get: it ends on
 * its own once the call's bash has ended and its last bytes are read, and the
 * session command waits for it. No helper outlives the command. (A `tee` in a
 * process substitution did: orphaned when bash exited, it was left a zombie in a
 * box whose init does not reap, one per command.)
 */
export function sandboxCommand(
  launchArgv: readonly string[],
  options: {
    timeoutSec?: number | undefined;
    stdinFile?: string | undefined;
    removeFirst?: readonly string[] | undefined;
    copy?: string | undefined;
    /** With `copy`: the call's stderr kept apart goes to this file, tailed to the logs' stderr the same way. */
    errCopy?: string | undefined;
  },
): string {
  const argv = launchArgv.map(shellQuote);
  if (options.timeoutSec !== undefined) argv.unshift("timeout", "-k", "5s", `${options.timeoutSec}s`);
  const run = argv.join(" ");
  const cleanup =
    options.removeFirst !== undefined && options.removeFirst.length > 0
      ? `rm -f ${options.removeFirst.map(shellQuote).join(" ")}; `
      : "";
  const copy = options.copy === undefined ? undefined : shellQuote(options.copy);
  const errCopy = copy === undefined || options.errCopy === undefined ? undefined : shellQuote(options.errCopy);
  const toCopy = copy === undefined ? "" : ` > ${copy}${errCopy === undefined ? "" : ` 2> ${errCopy}`}`;
  // A sandbox command's own stdin may be a pipe nobody ever closes (a Daytona session's): never let a call
  // read it. A stdin file is opened for the group, then unlinked before the command starts: what it holds (a
  // password for `read -s`) is on the sandbox's disk only until then, whether the call ends, times out or is
  // killed. The group's subshell becomes the command (exec): left waiting for it, it would report a kill
  // ("Terminated") on the output.
  const stdinFile = options.stdinFile === undefined ? undefined : shellQuote(options.stdinFile);
  const job =
    stdinFile !== undefined
      ? `{ rm -f ${stdinFile}; exec ${run}${toCopy}; } < ${stdinFile}`
      : `${run} < /dev/null${toCopy}`;
  // Run in the background and waited for with `wait`'s stderr dropped: a shell
  // reports a job killed by a signal ("Terminated") on its own stderr, which
  // would land in the output after a timeout. The job's stderr is kept. The
  // tails too: a kill of the call's process group takes them (where the
  // sandbox runs the whole command in one group), and a foreground tail's
  // death would be reported.
  const tail = (file: string): string => `tail -s 0.02 -c +1 --pid=$__sw_job -f ${file}`;
  // stderr's tail runs beside stdout's and is waited for before the job, whose status is the command's.
  const wait =
    copy === undefined
      ? "wait $! 2>/dev/null"
      : errCopy === undefined
        ? `__sw_job=$!; ${tail(copy)} 2>/dev/null & wait $! 2>/dev/null; wait $__sw_job 2>/dev/null`
        : `__sw_job=$!; ${tail(errCopy)} >&2 2>/dev/null & __sw_etail=$!; ${tail(copy)} 2>/dev/null & ` +
          `wait $! 2>/dev/null; wait $__sw_etail 2>/dev/null; wait $__sw_job 2>/dev/null`;
  const create = copy === undefined ? "" : `: > ${copy}; ${errCopy === undefined ? "" : `: > ${errCopy}; `}`;
  return `${cleanup}${create}${job} & ${wait}`;
}

/**
 * The probe a session runs in its sandbox before its first call: it makes the session's private directory
 * (mode 700: stdin files and output copies, which may hold secrets, go there; `previousDir`, one made before in
 * this sandbox, is removed) and says whether the sandbox's tail takes --pid (GNU coreutils), which
 * sandboxCommand's output copy needs. A tail without it (busybox) only means no copy: the probe's exit status is
 * not its answer, its lines are (sandboxProbeResult).
 */
export function sandboxProbe(name: string, previousDir?: string): string {
  const previous = previousDir === undefined ? "" : `${removeDirLine(previousDir)}; `;
  return (
    `${previous}umask 077; d=$(mktemp -d "\${TMPDIR:-/tmp}/shellwright-${name}-XXXXXXXX") && echo "dir=$d"; ` +
    "tail -s 0.02 -c +1 --pid=$$ /dev/null >/dev/null 2>&1 && echo tail-pid"
  );
}

/** What a session learnt of its sandbox from sandboxProbe. */
export interface SandboxProbe {
  /** The session's private directory there (mode 700): stdin files and output copies. */
  privateDir: string;
  /** The sandbox's tail takes --pid (GNU coreutils): the exact output copy is possible. */
  hasTailPid: boolean;
}

/** What sandboxProbe printed: the private directory (undefined if none was made), tail's --pid, and every line. */
export function sandboxProbeResult(output: string): {
  privateDir: string | undefined;
  hasTailPid: boolean;
  lines: string[];
} {
  const lines = output.split("\n").map((line) => line.trim());
  const privateDir = lines.find((line) => line.startsWith("dir=/"))?.slice("dir=".length);
  return { privateDir, hasTailPid: lines.includes("tail-pid"), lines };
}

/** The shell line that removes a private directory and everything in it. */
export function removeDirLine(dir: string): string {
  return `rm -rf -- ${shellQuote(dir)} 2>/dev/null`;
}

/**
 * `command` with its stdin from `file` (a file just uploaded into the sandbox, which the command's end removes);
 * the command's exit code is kept.
 */
export function withStdinFile(command: string, file: string): string {
  const quoted = shellQuote(file);
  return `${command} < ${quoted}; rc=$?; rm -f ${quoted}; exit $rc`;
}
