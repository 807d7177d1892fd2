/**
 * Runs the shared kill sweep (src/core/sweep-script.ts) on this
 * machine: the same script the remote backends run inside their box, so one
 * implementation decides what a call's processes are everywhere. Its bash
 * starts without the marks, so it can never count itself.
 */

import { spawn } from "node:child_process";
import type { KillSignal } from "../../core/transport.js";
import { parseSweep, sweepScript, type SweepResult, type SweepTarget } from "../../core/sweep-script.js";

/** A sweep that has not finished after this long is given up (the cgroup, if any, is the last word). */
const SWEEP_LIMIT_MS = 60_000;

export function runSweep(bash: string, target: SweepTarget, signal: KillSignal, graceMs: number): Promise<SweepResult> {
  return new Promise((resolve) => {
    let output = "";
    const child = spawn(bash, ["-c", sweepScript(target, signal, graceMs)], {
      stdio: ["ignore", "pipe", "ignore"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
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
