/**
 * A process with a PTY, run as one of the session's background processes
 * (sdk/spawn.ts over the process registry): it can be written to, resized
 * and signalled with everything it started. Its output is one stream, sent
 * as pty bytes. It holds one of the session's long-lived slots
 * (maxLongLived*) from its start to its end, as a plain process does.
 */

import type { Environment } from "../../../core/environment.js";
import { spawn, type SpawnedProcess } from "../../../sdk/spawn.js";
import { processRegistry } from "../../../tools/process/process-registry.js";
import type { SessionRegistry } from "../../sessions.js";
import { stdinWriter } from "./stdin-writer.js";
import { exitEnd, signalEnd, type EndInfo, type SandboxProcess } from "./sandbox-process.js";

export interface SpawnRun {
  registry: SessionRegistry;
  sandboxId: string;
  session: Environment;
  process: SandboxProcess;
  command: string;
  /** Exported to this process alone (sent on the launch's stdin, never on a command line). */
  envs: Record<string, string>;
  cwd: string | undefined;
  pty: { cols: number; rows: number };
}

/** Starts it; throws (429, 503) before anything runs when the gateway refuses. */
export async function startWithSpawn(run: SpawnRun): Promise<void> {
  const { process } = run;
  const slot = run.registry.claim(run.sandboxId, `e2b-process-${process.pid}`, new AbortController().signal, true);
  let handle: SpawnedProcess;
  try {
    handle = await spawn(run.session, run.command, {
      ...(run.cwd === undefined ? {} : { cwd: run.cwd }),
      ...(Object.keys(run.envs).length === 0 ? {} : { env: run.envs }),
      pty: run.pty,
      onOutput: (text: string) => process.output("pty", text),
    });
  } catch (error) {
    slot.release();
    throw error;
  }
  const ended = handle
    .wait()
    .then(async (result) => {
      await handle.streamsEnded;
      process.finish(endOf(result, process.requestedSignal));
    })
    .catch((error: unknown) =>
      process.finish({
        exitCode: -1,
        exited: false,
        status: "error",
        error: error instanceof Error ? error.message : String(error),
      }),
    )
    .finally(() => slot.release());
  // The gateway shutting down (or the slot cancelled) ends it.
  slot.signal.addEventListener("abort", () => void handle.signal("SIGKILL").catch(() => undefined), { once: true });
  process.driver = {
    // SIGKILL resolves once the tree is dead and the end is out (a list right after it no longer shows it);
    // SIGTERM may be ignored, so it resolves once sent.
    signal: async (signal) => {
      process.requestedSignal = signal;
      if (handle.status === "running") await handle.signal(signal);
      if (signal === "SIGKILL") await ended;
    },
    write: stdinWriter(handle),
    closeStdin: async () => {
      await handle.closeStdin();
      return true;
    },
    resize: async (size) => {
      const background = processRegistry(run.session).get(handle.id);
      if (background === undefined) return false;
      return processRegistry(run.session).resize(background, size);
    },
  };
}

function endOf(
  result: { status: string; exitCode: number | undefined; signal: string | undefined } | undefined,
  requested: "SIGTERM" | "SIGKILL" | undefined,
): EndInfo {
  if (result === undefined || result.status === "killed" || result.exitCode === undefined)
    return signalEnd(requested ?? "SIGKILL");
  if (requested !== undefined && result.signal === requested) return signalEnd(requested);
  return exitEnd(result.exitCode);
}
