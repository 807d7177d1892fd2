/**
 * What the local backend needs from the machine, checked once when a session
 * starts instead of misbehaving later: a POSIX system (process groups are the
 * unit a timeout kills) and bash 4.1 or later at the bash path. The snapshot
 * relies on BASHOPTS and the tools on associative arrays, which macOS's
 * /bin/bash 3.2 lacks. The kill path needs no external tool: Node puts each
 * call in its own process group (setsid(2)) and signals the group, so neither
 * setsid(1) nor /proc is used. See docs/platforms.md.
 */

import { execFile } from "node:child_process";
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
export function checkBash(bash: string, fromOption: boolean): Promise<void> {
  let check = passed.get(bash);
  if (check === undefined) {
    check = probe(bash, fromOption);
    passed.set(bash, check);
    check.catch(() => passed.delete(bash)); // a failure is checked again: the user may fix it meanwhile
  }
  return check;
}

function probe(bash: string, fromOption: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(bash, ["-c", 'echo "$BASH_VERSION"'], { timeout: PROBE_TIMEOUT_MS }, (error, stdout) => {
      const version = stdout.trim();
      const match = /^(\d+)\.(\d+)/.exec(version);
      const [major, minor] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
      if (!error && (major > MIN_MAJOR || (major === MIN_MAJOR && minor >= MIN_MINOR))) return resolve();
      const subject = fromOption ? `bashPath ${bash}` : `${bash} (the first bash on PATH)`;
      const found = error
        ? `could not be run (${error.message.split("\n")[0]})`
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
