/**
 * Runs the shared kill sweep (src/core/sweep-script.ts) on this
 * machine: the same script the remote backends run inside their box, so one
 * implementation decides what a call's processes are everywhere. Its bash
 * starts without the marks, so it can never count itself.
 */

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { SESSION_MARK } from "../../core/call-marks.js";
import type { KillSignal } from "../../core/transport.js";
import { parseSweep, sweepScript, type SweepResult, type SweepTarget } from "../../core/sweep-script.js";
import { killGroup } from "./process-groups.js";

/** A sweep that has not finished after this long is given up (the cgroup, if any, is the last word). */
const SWEEP_LIMIT_MS = 60_000;

/** How the sweep's bash is launched: as is, or wrapped (into a sandbox, where the target's PIDs are that one's). */
export type SweepLaunch = (argv: string[], env: NodeJS.ProcessEnv) => { argv: string[]; env: NodeJS.ProcessEnv };

export function runSweep(
  bash: string,
  target: SweepTarget,
  signal: KillSignal,
  graceMs: number,
  launch: SweepLaunch = (argv, env) => ({ argv, env }),
): Promise<SweepResult> {
  return new Promise((resolve) => {
    let output = "";
    let run: ReturnType<SweepLaunch>;
    try {
      run = launch([bash, "-c", sweepScript(target, signal, graceMs)], { PATH: process.env.PATH ?? "/usr/bin:/bin" });
    } catch {
      // The sandbox is gone, and with its pid namespace every process in it.
      resolve({ hit: [], clean: false });
      return;
    }
    const child = spawn(run.argv[0]!, run.argv.slice(1), { stdio: ["ignore", "pipe", "ignore"], env: run.env });
    const timer = setTimeout(() => child.kill("SIGKILL"), SWEEP_LIMIT_MS);
    child.stdout.setEncoding("utf8").on("data", (text: string) => (output += text));
    child.once("error", () => {
      clearTimeout(timer);
      resolve({ hit: [], clean: false });
    });
    child.once("close", () => {
      clearTimeout(timer);
      resolve(parseSweep(output));
    });
  });
}

/**
 * KILL for a session's processes, however they detached: its live groups, the
 * groups its ended jobs left (only while their leader's PID is unused: a live
 * process with it is a newcomer), and everything carrying its mark. Empties both sets.
 */
export async function endSessionProcesses(
  bash: string,
  sessionMark: string,
  groups: Set<number>,
  endedGroups: Set<number>,
): Promise<void> {
  for (const pid of groups) killGroup(pid, "KILL");
  for (const pid of endedGroups) if (!existsSync(`/proc/${pid}`)) killGroup(pid, "KILL");
  if (bash !== "") {
    const all = [...groups, ...endedGroups];
    const target = { marks: [`${SESSION_MARK}=${sessionMark}`], groups: all, sessions: all, deadLeadersOnly: true };
    await runSweep(bash, target, "KILL", 0);
  }
  groups.clear();
  endedGroups.clear();
}
