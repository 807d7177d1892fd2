/** How long the registry keeps a finished process, so that its output can still be read. */

import type { BackgroundProcess } from "./background-process.js";

/** Drops finished processes past their time to live, then the oldest finished ones over the limit. */
export function pruneFinished(
  processes: Map<string, BackgroundProcess>,
  limits: { finishedTtlMs: number; maxProcesses: number },
  now = Date.now(),
): void {
  for (const [id, process] of processes) {
    if (process.finishedAt !== undefined && now - process.finishedAt > limits.finishedTtlMs) processes.delete(id);
  }
  if (processes.size < limits.maxProcesses) return;
  const finished = [...processes.values()]
    .filter((p) => p.finishedAt !== undefined)
    .sort((a, b) => a.finishedAt! - b.finishedAt!);
  for (const process of finished) {
    if (processes.size < limits.maxProcesses) break;
    processes.delete(process.id);
  }
}
