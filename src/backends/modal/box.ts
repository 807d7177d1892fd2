/**
 * Programs in the Modal sandbox as the fast path needs them (BoxExec): a
 * long-lived exec whose stdin and stdout are byte streams, and a short one
 * with bytes on stdin (the helper's copy). Each exec is one SDK call; a fast
 * call after that is one write on the helper's stdin stream.
 */

import { once } from "node:events";
import { PassThrough, type Writable } from "node:stream";
import { boxOutputs, type BoxExec, type BoxProcess } from "../shared/fast-path/box-helper.js";
import type { ModalExecParams, ModalProcess, ModalSandbox } from "./sdk.js";

const SHORT_EXEC_TIMEOUT_MS = 60_000;

export function modalBox(sandbox: () => ModalSandbox): BoxExec {
  return {
    spawn: (argv) => spawnInSandbox(sandbox, argv),
    run: (argv, stdin) => runInSandbox(sandbox(), argv, stdin, SHORT_EXEC_TIMEOUT_MS),
  };
}

/** A short program in the sandbox, bytes on its stdin; its exit code and merged output. */
export async function runInSandbox(
  sandbox: ModalSandbox,
  argv: string[],
  stdin: Uint8Array | undefined,
  timeoutMs: number,
): Promise<{ exitCode: number; output: string }> {
  const process = await sandbox.exec(argv, { mode: "binary", stdout: "pipe", stderr: "pipe", timeoutMs });
  if (stdin !== undefined) await process.stdin.writeBytes(stdin);
  await process.stdin.close();
  const [stdout, stderr, exitCode] = await Promise.all([
    process.stdout.readBytes(),
    process.stderr.readBytes(),
    process.wait(),
  ]);
  return { exitCode, output: Buffer.concat([stdout, stderr]).toString("utf8") };
}

function spawnInSandbox(sandbox: () => ModalSandbox, argv: string[]): BoxProcess {
  const stdin = new PassThrough();
  const { stdout, stderr, endWhen } = boxOutputs();
  let stopped = false;
  const params: ModalExecParams = { mode: "binary", stdout: "pipe", stderr: "pipe" };
  const closed = endWhen(
    (async () => {
      let process: ModalProcess;
      try {
        process = await sandbox().exec(argv, params);
      } catch {
        return;
      }
      void feed(stdin, process).catch(() => undefined);
      if (stopped) stdin.end();
      await Promise.all([
        drain(process.stdout, stdout).catch(() => undefined),
        drain(process.stderr, stderr).catch(() => undefined),
        process.wait().catch(() => undefined),
      ]);
    })(),
  );
  return {
    stdin,
    stdout,
    stderr,
    closed,
    // The SDK has no kill for an exec: the end of its stdin makes the helper quit.
    stop: () => {
      stopped = true;
      stdin.end();
    },
  };
}

/** Our stdin stream into the exec's, one write at a time, then its close. */
async function feed(from: PassThrough, process: ModalProcess): Promise<void> {
  for await (const chunk of from) await process.stdin.writeBytes(chunk as Buffer);
  await process.stdin.close();
}

/** The exec's stream into ours, waiting while ours is full (a slow reader pauses the helper). */
async function drain(from: ReadableStream<Uint8Array>, to: Writable): Promise<void> {
  const reader = from.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      if (value !== undefined && !to.write(value)) await once(to, "drain");
    }
  } finally {
    reader.releaseLock();
  }
}
