/**
 * How the helper is started, in one place for every backend: its argv after
 * its own path, the environment it starts with, and the line each job
 * starts with. Backends only wrap it (a cgroup join, an ssh remote command,
 * a box's `sh -c` that finds bash and reports the pid).
 */

import { CALL_MARK, SESSION_MARK } from "../../../core/call-marks.js";
import { buildLauncherScript, jobDefinitions } from "../../../core/fast-script.js";
import { helperFlags } from "./helper-stderr.js";

export interface HelperStart {
  snapshot: string;
  /** Where the helper makes its private directory (stdin files, FIFOs, dumps). */
  workDir: string;
  /** The launcher's bash (an absolute path, or BASH_FROM_BOX where only the box knows it). */
  bash: string;
  /** The helper's text mode (`-t`), for a channel that carries text only. */
  text?: boolean;
}

/** Where the helper program is, and what it starts with: what every backend's helper command is built from. */
export interface HelperProgram extends Omit<HelperStart, "text"> {
  /** The helper's path where it runs. */
  helper: string;
  sessionMark: string;
}

/** Stands for bash's path where only the box can look it up (box-helper.ts replaces it there). */
export const BASH_FROM_BOX = "__SHELLWRIGHT_BASH__";

/** `swmux [flags] SNAPSHOT WORKDIR -- BASH -c LAUNCHER bash DEFINITIONS`, without the helper's own path. */
export function helperArgs(start: HelperStart): string[] {
  return [
    ...helperFlags(start.text === true),
    start.snapshot,
    start.workDir,
    "--",
    start.bash,
    "-c",
    buildLauncherScript(),
    "bash",
    jobDefinitions(),
  ];
}

/**
 * The helper's whole environment: the launcher starts like the plain path's
 * clean shell (the snapshot is its state), with the session's mark so the
 * close sweep and the owner watchdog find it, its launcher and every job.
 */
export function helperEnv(sessionMark: string): Record<string, string> {
  return { SHLVL: "1", [SESSION_MARK]: sessionMark };
}

/** The same environment as `env -i` words, for a command run on another machine or in a box. */
export function helperEnvWords(sessionMark: string): string[] {
  return ["env", "-i", ...Object.entries(helperEnv(sessionMark)).map(([name, value]) => `${name}=${value}`)];
}

/**
 * A job's script with its call's mark exported first (every process of the
 * call carries it). On the same line: the command's line numbers count from 1.
 */
export function markedJob(callMark: string, script: string): string {
  return `builtin export ${CALL_MARK}=${callMark}; ${script}`;
}
