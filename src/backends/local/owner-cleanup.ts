/**
 * What ends a local session whose owner died without close(), twice over:
 * the owner watchdog's cleanup (shared/owner-watchdog.ts), and, for when the
 * watchdog died with its owner, a record in the state dir that
 * `shellwright sessions --prune` reads (leftover-jobs.ts): the session's
 * mark, its cgroup, and (groups-file.ts) its calls' process groups.
 */

import { writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { SESSION_MARK, SESSION_MARK_FILE } from "../../core/call-marks.js";
import { shellQuote } from "../../core/script.js";
import { sweepScript } from "../../core/sweep-script.js";
import { OwnerWatchdog } from "../shared/owner-watchdog.js";
import { keepScript } from "./sandbox/overlay-keep.js";
import { removeRecordedDirsLine } from "./checkpoint-dirs.js";
import { SANDBOX_DIR_PREFIX } from "./paths.js";

/** The file of the state dir that names the session's cgroup. */
export const CGROUP_FILE = "cgroup";

/** How long a fast-path job runs before the owner watchdog (and the groups file) is told of its group. */
export const WATCHDOG_AFTER_MS = 20;

/** The watchdog's tag for an ended job's group: killed only while no process has its leader's PID. */
export const ENDED_GROUP_TAG = "e";

export interface OwnerCleanup {
  bash: string;
  stateDir: string;
  /** The session made the state dir (and so removes it); only such a dir is found by `--prune`. */
  ownsStateDir: boolean;
  sessionMark: string;
  cgroupPath: string | undefined;
  /** A sandboxed workspace's overlay layers are in the state dir: its changes are kept before the dir goes. */
  keepsWorkspace?: boolean;
  /** Its commands run in the sandbox and can write the state dir (whatever its name): nothing recorded there is trusted. */
  sandboxed?: boolean;
}

/** Records what `--prune` needs (before the owner file, which makes the dir a candidate) and starts the watchdog. */
export function guardOwnerDeath(o: OwnerCleanup): OwnerWatchdog {
  if (o.ownsStateDir) {
    writeFileSync(join(o.stateDir, SESSION_MARK_FILE), `${o.sessionMark}\n`, { mode: 0o600 });
    if (o.cgroupPath !== undefined) writeFileSync(join(o.stateDir, CGROUP_FILE), `${o.cgroupPath}\n`, { mode: 0o600 });
  }
  const sweep = sweepScript({ marks: [`${SESSION_MARK}=${o.sessionMark}`] }, "KILL", 0);
  const cleanup = [
    // The cgroup catches what cleared its environment too; the sweep what left the groups.
    o.cgroupPath === undefined ? "" : `echo 1 > ${shellQuote(`${o.cgroupPath}/cgroup.kill`)} 2>/dev/null`,
    `for g; do [[ $g == ${ENDED_GROUP_TAG}* ]] && { g=\${g#${ENDED_GROUP_TAG}}; [[ -e /proc/$g ]] && continue; }; kill -s KILL -- "-$g" 2>/dev/null; done`,
    `( ${sweep}\n) >/dev/null 2>&1`,
    // What a rollback or fork under way had made beside the workspace (a sandboxed session's record is not read).
    o.sandboxed === true || basename(o.stateDir).startsWith(SANDBOX_DIR_PREFIX)
      ? ""
      : removeRecordedDirsLine(o.stateDir),
    // Once the processes are ended, and the dir only if the changes were kept (else prune tries again).
    o.ownsStateDir
      ? `${o.keepsWorkspace === true ? `${keepScript(o.stateDir, o.bash)} && ` : ""}rm -rf -- ${shellQuote(o.stateDir)}`
      : "",
  ];
  return new OwnerWatchdog({ bashPath: o.bash, cleanup: cleanup.filter(Boolean).join("\n") });
}
