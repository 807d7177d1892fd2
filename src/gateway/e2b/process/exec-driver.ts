/**
 * A process without a PTY, run through the session's `execute`: stdout and
 * stderr arrive apart and whole, and an abort kills the whole tree. An open
 * stdin comes from a feed (stdin-feed.ts). It runs as one of the gateway's long-lived executions (it lasts as
 * long as the process, like a background process's follower), so the
 * session counts as busy while it runs and maxLongLived* bound it.
 */

import type { SessionRegistry } from "../../sessions.js";
import { exitEnd, signalEnd, type SandboxProcess } from "./sandbox-process.js";
import type { StdinFeed } from "./stdin-feed.js";

/** execute's own limit, far past any sandbox's lifetime: the sandbox's timeout or a kill ends it first. */
const NO_LIMIT_MS = 7 * 24 * 3600_000;

export interface ExecRun {
  registry: SessionRegistry;
  sandboxId: string;
  process: SandboxProcess;
  command: string;
  /** The command's stdin (the values of its variables, command-line.ts); none: empty. */
  stdin: string | undefined;
  cwd: string | undefined;
  /** `fresh` sandboxes: the command leaves the session's cwd and variables as they were. */
  isolated: boolean;
  /** Its open stdin (the command reads the feed's FIFO); none: it was started without stdin. */
  input?: StdinFeed | undefined;
}

/** Starts it; throws (429, 503) before anything runs when the gateway refuses. */
export function startWithExecute(run: ExecRun): void {
  const { process } = run;
  const controller = new AbortController();
  const execute = run.registry.begin(run.sandboxId, `e2b-process-${process.pid}`, controller.signal, true);
  let ended: Promise<void> = Promise.resolve();
  process.driver = {
    // Resolves once the tree is dead and the end is out: a list right after a kill no longer shows it.
    signal: async (signal) => {
      process.requestedSignal = signal;
      controller.abort();
      await ended;
    },
    write: async (data) => (await run.input?.write(data)) ?? false,
    closeStdin: async () => (await run.input?.close()) ?? false,
    resize: async () => false,
  };
  ended = execute(run.command, {
    separateStreams: true,
    onStdout: (text) => process.output("stdout", text),
    onStderr: (text) => process.output("stderr", text),
    isolated: run.isolated,
    longLived: true,
    timeoutMs: NO_LIMIT_MS,
    ...(run.cwd === undefined ? {} : { cwd: run.cwd }),
    ...(run.stdin === undefined ? {} : { stdin: run.stdin }),
  })
    .finally(() => run.input?.stop())
    .then(
      (result) => {
        if (result.interrupted) process.finish(signalEnd(process.requestedSignal ?? "SIGKILL"));
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
