/**
 * What the local backend needs from the machine, checked once when a session
 * starts instead of misbehaving later: a POSIX system (process groups are the
 * unit a timeout kills) and bash 4.1 or later at the bash path. The snapshot
 * relies on BASHOPTS and the tools on associative arrays, which macOS's
 * /bin/bash 3.2 lacks. The kill path needs no external tool: Node puts each
 * call in its own process group (setsid(2)) and signals the group, so neither
 * setsid(1) nor /proc is used. See docs/platforms.md.
 */

import { execFile, type ExecFileException } from "node:child_process";
import { BackendUnavailableError, InvalidOptionError } from "../../core/errors.js";

const MIN_MAJOR = 4;
const MIN_MINOR = 1;
const PROBE_TIMEOUT_MS = 10_000;

/** Bash paths that passed, so the probe costs one bash start per path per process. */
const passed = new Map<string, Promise<void>>();

/** Process groups and bash: Windows has neither outside WSL. */
export function requirePosix(): void {
  if (process.platform === "win32") {
    throw new BackendUnavailableError(
      "The local backend needs a POSIX system (Linux or macOS); on Windows run Shellwright inside WSL.",
      { backend: "local" },
    );
  }
}

/**
 * Resolves when `bash` is usable; otherwise rejects with one line saying what
 * to install: an InvalidOptionError when the path came from the `bashPath`
 * option, a BackendUnavailableError when it was found on PATH.
 */
export function checkBash(bash: string, fromOption: boolean, timeoutMs = PROBE_TIMEOUT_MS): Promise<void> {
  let check = passed.get(bash);
  if (check === undefined) {
    const probed = probe(bash, fromOption, timeoutMs);
    check = probed.then(() => undefined);
    passed.set(bash, check);
    // A failure is checked again (the user may fix it meanwhile), and so is a probe that proved nothing.
    probed.then(
      (proved) => proved || passed.delete(bash),
      () => passed.delete(bash),
    );
  }
  return check;
}

/**
 * True when bash proved its version, false when the probe ran out of time: on a
 * loaded machine a bash start can take that long, which says nothing about the
 * version, so the session goes on (its own start deadline still applies).
 */
function probe(bash: string, fromOption: boolean, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    // SHLVL=1, as the transport starts bash: Node gives a child's stdin as a socket, and a bash that does not know
    // it is nested then reads ~/.bashrc as if sshd ran it, whose output would come before the version.
    const env = { ...process.env, SHLVL: "1" };
    execFile(bash, ["-c", 'echo "$BASH_VERSION"'], { timeout: timeoutMs, env }, (error, stdout) => {
      if (error?.killed === true) return resolve(false);
      const version = stdout.trim();
      const match = /^(\d+)\.(\d+)/.exec(version);
      const [major, minor] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
      if (!error && (major > MIN_MAJOR || (major === MIN_MAJOR && minor >= MIN_MINOR))) return resolve(true);
      const subject = fromOption ? `bashPath ${bash}` : `${bash} (the first bash on PATH)`;
      const found = error
        ? `could not be run (${failure(error)})`
        : match
          ? `is bash ${version}`
          : "is not bash (it printed no $BASH_VERSION)";
      const message =
        `The local backend needs bash ${MIN_MAJOR}.${MIN_MINOR} or later; ${subject} ${found}. ` +
        `Install a newer bash (macOS: brew install bash) and set bashPath to it, e.g. bashPath: "/opt/homebrew/bin/bash".`;
      reject(
        fromOption
          ? new InvalidOptionError("bashPath", message)
          : new BackendUnavailableError(message, { backend: "local" }),
      );
    });
  });
}

/** Why the probe failed, with what execFile's "Command failed" leaves out: the signal or the exit status. */
function failure(error: ExecFileException): string {
  const first = error.message.split("\n")[0]!;
  if (error.signal) return `${first}: killed by ${error.signal}`;
  if (typeof error.code === "number") return `${first}: exit status ${error.code}`;
  return first;
}
