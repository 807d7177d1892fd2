/**
 * The ssh backend's fast path (docs/fast-path.md, "SSH"): the statically
 * linked helper is copied once into the session's directory on the host,
 * then runs on ONE long-lived `ssh` channel over the master, whose
 * stdin/stdout carry the helper's frames. Pure builders for the remote
 * commands, plus the stream over the local `ssh` client.
 */

import { spawn } from "node:child_process";
import { shellQuote } from "../../core/script.js";
import type { HelperStream } from "../shared/fast-path/helper-client.js";
import { helperArgs, helperEnvWords, type HelperProgram } from "../shared/fast-path/helper-argv.js";
import { passOnDebugLog } from "../shared/fast-path/helper-stderr.js";
import { GROUP_PATTERN } from "./command.js";

/**
 * One round trip: the host's machine name, its bash, and whether the helper
 * is there already (a named session reopened on the same directory).
 */
export function probeScript(helper: string): string {
  return `uname -m; command -v bash; if [ -x ${shellQuote(helper)} ]; then echo have; else echo missing; fi`;
}

export interface Probe {
  machine: string;
  bash: string;
  present: boolean;
}

export function parseProbe(stdout: string): Probe | undefined {
  const [machine, bash, have] = stdout.trim().split("\n");
  if (machine === undefined || bash === undefined || !bash.startsWith("/")) return undefined;
  return { machine: machine.trim(), bash: bash.trim(), present: have?.trim() === "have" };
}

/**
 * Writes the helper from stdin (its bytes never reach a command line), then
 * runs it once without arguments: its usage exit (2) proves it can execute
 * there (a noexec temp dir says 126).
 */
export function installScript(helper: string): string {
  const file = shellQuote(helper);
  const tmp = shellQuote(`${helper}.tmp`);
  return `umask 077 && cat > ${tmp} && chmod 700 ${tmp} && mv -f ${tmp} ${file} || exit 1
${file} >/dev/null 2>&1; echo "rc=$?"`;
}

export function installWorked(stdout: string): boolean {
  return /(^|\n)rc=2\s*$/.test(stdout);
}

/** workDir: the session's remote temp dir. */
export interface HelperCommandOptions extends HelperProgram {
  /** A named session's groups file on the host: the helper's group is recorded there. */
  groupsFile?: string | undefined;
}

/**
 * The remote command of the helper's channel. sshd's shell reports its pid
 * (the session leader, so the group of the helper and its launcher) on
 * stderr, then execs the helper with a clean environment: the snapshot is
 * the launcher's whole state, as on the plain path's clean start.
 */
export function helperRemoteCommand(options: HelperCommandOptions): string {
  const record = options.groupsFile === undefined ? "" : ` echo "$$" >> ${shellQuote(options.groupsFile)} 2>/dev/null;`;
  const argv = [
    ...helperEnvWords(options.sessionMark),
    options.helper,
    ...helperArgs({ snapshot: options.snapshot, workDir: options.workDir, bash: options.bash }),
  ];
  return `printf '__SHELLWRIGHT_GROUP_%s__\\n' "$$" >&2;${record} exec ${argv.map(shellQuote).join(" ")}`;
}

/**
 * The job script's first line on a named session: appends the job's
 * process group (the job's subshell leads it; `$$` is the launcher's) and
 * its session (the helper's) as GROUP:SESSION to the groups file, with
 * builtins only, before the command runs. The closer kills the group only
 * while that pair still exists and its leader is gone (never a reused PID).
 */
export function recordJobGroupLine(groupsFile: string): string {
  return `{ builtin read -r __sw_g < /proc/$BASHPID/stat; __sw_g=\${__sw_g##*) }; __sw_g=\${__sw_g#* * }; __sw_s=\${__sw_g#* }; builtin echo "\${__sw_g%% *}:\${__sw_s%% *}" >> ${shellQuote(groupsFile)}; } 2>/dev/null`;
}

/** How the helper's `ssh` client ended: its exit code and the end of its stderr (to tell a lost connection). */
export interface ChannelEnd {
  code: number;
  stderr: string;
}

/** Starts the helper's channel; onGroup gets the helper's remote group once sshd's shell reports it. */
export function spawnSshHelper(
  sshPath: string,
  args: string[],
  onGroup: (group: number) => void,
): HelperStream & { ended: Promise<ChannelEnd> } {
  const child = spawn(sshPath, args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  const ended = new Promise<ChannelEnd>((resolve) => {
    child.once("error", (error) => resolve({ code: 255, stderr: error.message }));
    child.once("close", (code) => resolve({ code: code ?? 255, stderr }));
  });
  const closed = ended.then(() => undefined);
  let reported = false;
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    // Only the group line and the last messages (ssh's own, when the connection drops) are kept.
    stderr = (stderr + text).slice(-4096);
    passOnDebugLog(text);
    if (reported) return;
    const match = GROUP_PATTERN.exec(stderr);
    if (match) {
      reported = true;
      onGroup(Number(match[1]));
    }
  });
  const streams = [child.stdout, child.stderr, child.stdin] as unknown as { ref?(): void; unref?(): void }[];
  const hold = (busy: boolean): void => {
    if (busy) child.ref();
    else child.unref();
    for (const stream of streams) {
      if (busy) stream.ref?.();
      else stream.unref?.();
    }
  };
  // An idle helper never keeps this process alive (a session left open does not hold the event loop).
  hold(false);
  return {
    hold,
    input: child.stdin,
    output: child.stdout,
    closed,
    ended,
    stderrTail: () => stderr,
    kill: () => {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}
