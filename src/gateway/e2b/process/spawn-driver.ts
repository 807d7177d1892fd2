/**
 * A process with a PTY or an open stdin, run as one of the session's
 * background processes (sdk/spawn.ts over the process registry): it can be
 * written to, resized and killed with everything it started.
 *
 * Its stdout and stderr arrive merged (the registry keeps one log), sent as
 * stdout; a PTY's output is sent as pty bytes. Once spawn can keep the two
 * streams apart, `onOutput` below becomes `onStdout`/`onStderr` and nothing
 * else here changes.
 */

import type { Environment } from "../../../core/environment.js";
import { spawn } from "../../../sdk/spawn.js";
import { processRegistry } from "../../../tools/process/process-registry.js";
import type { SessionRegistry } from "../../sessions.js";
import { exitEnd, signalEnd, type SandboxProcess } from "./sandbox-process.js";

export interface SpawnRun {
  registry: SessionRegistry;
  sandboxId: string;
  session: Environment;
  process: SandboxProcess;
  command: string;
  cwd: string | undefined;
  pty: { cols: number; rows: number } | undefined;
}

export async function startWithSpawn(run: SpawnRun): Promise<void> {
  const { process } = run;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const handle = await spawn(run.session, run.command, {
    ...(run.cwd === undefined ? {} : { cwd: run.cwd }),
    ...(run.pty === undefined ? {} : { pty: run.pty }),
    onOutput: (text) => process.output(run.pty === undefined ? "stdout" : "pty", encoder.encode(text)),
  });
  process.driver = {
    // Resolves once the tree is dead and the end is out: a list right after a kill no longer shows it.
    signal: async (signal) => {
      process.requestedSignal = signal;
      await handle.kill();
      const { status, exitCode } = handle;
      if (status === "exited" && exitCode !== undefined) process.finish(exitEnd(exitCode));
      else if (status !== "running") process.finish(signalEnd(signal));
    },
    write: async (data) => {
      if (handle.status !== "running") return false;
      await handle.write(decoder.decode(data));
      return true;
    },
    closeStdin: async () => {
      await handle.closeStdin();
      return true;
    },
    resize: async (size) => {
      const background = processRegistry(run.session).get(handle.id);
      if (background === undefined || run.pty === undefined) return false;
      return processRegistry(run.session).resize(background, size);
    },
  };
  // The wait holds the session active (the idle reaper leaves it) as long as the process runs.
  void run.registry
    .branch(run.sandboxId, () => handle.wait())
    .then(
      (result) => {
        if (result === undefined || result.status === "killed" || result.exitCode === undefined)
          process.finish(signalEnd(process.requestedSignal ?? "SIGKILL"));
        else process.finish(exitEnd(result.exitCode));
      },
      (error: unknown) =>
        process.finish({
          exitCode: -1,
          exited: false,
          status: "error",
          error: error instanceof Error ? error.message : String(error),
        }),
    );
}
