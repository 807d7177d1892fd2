/**
 * Pure builders for the `ssh` argv and the remote command strings, so every
 * shape can be unit-tested without a server.
 *
 * sshd runs a remote command as `$SHELL -c STRING` in the user's home; bash
 * as that shell reads ~/.bashrc first (Debian builds it so), which is a cost
 * every call pays and nothing on the client can avoid.
 */

import { shellQuote } from "../../core/script.js";
import { sweepScript } from "../../core/sweep-script.js";

export interface SshTarget {
  host: string;
  user?: string | undefined;
  port?: number | undefined;
  keyPath?: string | undefined;
  knownHostsFile?: string | undefined;
  strictHostKeyChecking: "yes" | "accept-new" | "no";
  connectTimeoutMs: number;
  /** Extra `-o Key=Value` options, in order. */
  sshOptions: readonly string[];
  /** The master's socket, in a private 0700 directory. */
  controlPath: string;
  controlPersistSeconds: number;
}

/** A session's target: the connection options of its config (nothing else of it), its master at `controlPath`. */
export function sshTarget(o: Omit<SshTarget, "controlPath">, controlPath: string): SshTarget {
  return {
    host: o.host,
    user: o.user,
    port: o.port,
    keyPath: o.keyPath,
    knownHostsFile: o.knownHostsFile,
    strictHostKeyChecking: o.strictHostKeyChecking,
    connectTimeoutMs: o.connectTimeoutMs,
    sshOptions: o.sshOptions,
    controlPath,
    controlPersistSeconds: o.controlPersistSeconds,
  };
}

/**
 * The remote half of the exit status. sshd closes a channel only when every
 * process holding its stdout is gone, so the ssh client of `sleep 100 &`
 * would not exit for 100 s. The outer shell prints the wrapper's exit code on
 * the channel's stderr, which the wrapper itself never writes to (it sends
 * its stderr to stdout first thing), so the code arrives as soon as the
 * wrapper exits.
 */
export const EXIT_PATTERN = /__SHELLWRIGHT_EXIT_(\d+)__/;
/**
 * The outer shell is the session leader sshd started (setsid), so its PID is
 * the process group of everything the call starts, backgrounded children
 * included: the unit a timeout kills, and what close() cleans up.
 */
export const GROUP_PATTERN = /__SHELLWRIGHT_GROUP_(\d+)__/;

/** Options for every ssh invocation: the master connection, no prompts, fail fast. */
export function sshOptions(target: SshTarget): string[] {
  const args = [
    "-o",
    `ControlPath=${target.controlPath}`,
    "-o",
    "ControlMaster=auto",
    "-o",
    `ControlPersist=${target.controlPersistSeconds}`,
    "-o",
    "BatchMode=yes",
    "-o",
    `ConnectTimeout=${Math.max(1, Math.ceil(target.connectTimeoutMs / 1000))}`,
    "-o",
    `StrictHostKeyChecking=${target.strictHostKeyChecking}`,
    // A dead peer is noticed in about 15 s instead of never.
    "-o",
    "ServerAliveInterval=5",
    "-o",
    "ServerAliveCountMax=3",
    "-o",
    "LogLevel=ERROR",
  ];
  if (target.knownHostsFile !== undefined) args.push("-o", `UserKnownHostsFile=${target.knownHostsFile}`);
  if (target.port !== undefined) args.push("-p", String(target.port));
  if (target.keyPath !== undefined) args.push("-i", target.keyPath, "-o", "IdentitiesOnly=yes");
  if (target.user !== undefined) args.push("-l", target.user);
  for (const option of target.sshOptions) args.push("-o", option);
  return args;
}

/** argv for running `remoteCommand` on the host; -T: no terminal, output stays bytes. */
export function sshArgs(target: SshTarget, remoteCommand: string): string[] {
  return [...sshOptions(target), "-T", target.host, remoteCommand];
}

/** argv for a control request to the master (`check`, `exit`). */
export function controlArgs(target: SshTarget, request: "check" | "exit"): string[] {
  return [...sshOptions(target), "-O", request, target.host];
}

/** `user@host:port`, for messages. */
export function describeTarget(target: Pick<SshTarget, "host" | "user" | "port">): string {
  return `${target.user === undefined ? "" : `${target.user}@`}${target.host}${target.port === undefined ? "" : `:${target.port}`}`;
}

export interface WrapOptions {
  cleanEnv: boolean;
  /** A private file of `export NAME='value'` lines, sourced by shells that do not start clean. */
  envFile?: string | undefined;
  /** Run this script file instead of `-c SCRIPT` (scripts too long for one argument). */
  scriptFile?: string | undefined;
  /** `NAME=value` marks every process of the call carries (src/core/call-marks.ts). */
  marks?: readonly string[] | undefined;
  /** Append the call's process group here, for a later process to close the session (a CLI named session). */
  groupsFile?: string | undefined;
  /**
   * The call keeps its stderr apart, so the command's own stderr shares the channel's stderr with the
   * group and exit lines: the wrapper reads a nonce from stdin's first line (the command never sees
   * it) and keys both lines with it (keyedPatterns).
   */
  keyed?: boolean | undefined;
}

/** The group and exit lines of a keyed wrapper (WrapOptions.keyed): only the holder of the nonce prints them. */
export function keyedPatterns(nonce: string): { group: RegExp; exit: RegExp } {
  return {
    group: new RegExp(`__SHELLWRIGHT_GROUP_${nonce}_(\\d+)__\\n`),
    exit: new RegExp(`\\n?__SHELLWRIGHT_EXIT_${nonce}_(\\d+)__\\n`),
  };
}

/**
 * The remote command for one `bash -c SCRIPT`. A clean start goes through
 * `env -i` (the snapshot is then the whole truth about the environment); the
 * others first source the session's env file, so a login profile sees HOME
 * or PATH as the caller set them, without a value ever reaching a command line.
 */
export function wrapScript(script: string, options: WrapOptions): string {
  const bashArgs = `${options.scriptFile === undefined ? `-c ${shellQuote(script)}` : shellQuote(options.scriptFile)}`;
  const marks = (options.marks ?? []).map((mark) => `${shellQuote(mark)} `).join("");
  const env = marks === "" ? "" : `env ${marks}`;
  let run: string;
  if (options.cleanEnv) {
    run = `env -i ${marks}bash ${bashArgs}`;
  } else if (options.envFile !== undefined) {
    const inner = `set -a && . ${shellQuote(options.envFile)} && set +a && exec bash ${options.scriptFile === undefined ? '-c "$0"' : '"$0"'}`;
    run = `${env}bash -c ${shellQuote(inner)} ${options.scriptFile === undefined ? shellQuote(script) : shellQuote(options.scriptFile)}`;
  } else {
    run = `${env}bash ${bashArgs}`;
  }
  const cleanup = options.scriptFile === undefined ? "" : `; rm -f ${shellQuote(options.scriptFile)}`;
  const record = options.groupsFile === undefined ? "" : ` echo "$$" >> ${shellQuote(options.groupsFile)} 2>/dev/null;`;
  if (options.keyed === true)
    return `IFS= read -r __sw_k; printf '__SHELLWRIGHT_GROUP_%s_%s__\\n' "$__sw_k" "$$" >&2;${record} ${run}; __sw_rc=$?${cleanup}; printf '\\n__SHELLWRIGHT_EXIT_%s_%s__\\n' "$__sw_k" "$__sw_rc" >&2`;
  return `printf '__SHELLWRIGHT_GROUP_%s__\\n' "$$" >&2;${record} ${run}; __sw_rc=$?${cleanup}; printf '__SHELLWRIGHT_EXIT_%s__\\n' "$__sw_rc" >&2`;
}

/**
 * Kills one call's processes on the host: the shared sweep (bash and /proc,
 * src/core/sweep-script.ts) over the call's group and session
 * (the outer shell leads both), its wrapper's descendants and everything
 * carrying its mark. The wrapper shell (its PID came first in the output)
 * gets SIGKILL first, whatever the signal: a stopped call must leave no
 * trace, but a bash that handles SIGTERM runs its EXIT trap, which would
 * commit the call's snapshot, and may report its child's death
 * ("Terminated") into the output. A TERM escalates to KILL after graceMs.
 */
export function killScript(
  target: {
    group: number | undefined;
    pid: number | undefined;
    startTime?: string | undefined;
    mark?: string | undefined;
  },
  signal: "TERM" | "KILL",
  graceMs = 1000,
): string {
  const leaders = target.group === undefined ? [] : [target.group];
  return sweepScript(
    {
      marks: target.mark === undefined ? [] : [target.mark],
      root: target.pid,
      rootStartTime: target.startTime,
      rootSignal: "KILL",
      groups: leaders,
      sessions: leaders,
    },
    signal,
    graceMs,
  );
}
