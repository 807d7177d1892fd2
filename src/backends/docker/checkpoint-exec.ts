/**
 * One checkpoint script in the container (checkpoint-scripts.ts), its output
 * as bytes. Aborting it stops the script in the container too, not only this
 * end of the exec: it runs with a mark of its own that a sweep finds.
 */

import { CALL_MARK, newMarkValue } from "../../core/call-marks.js";
import { CheckpointError } from "../../core/errors.js";
import { sweepScript } from "../../core/sweep-script.js";
import type { EngineApi } from "./engine.js";
import { startExec } from "./exec.js";

const BACKEND = "docker";

export interface ScriptResult {
  code: number;
  output: Buffer;
}

export async function runScript(
  engine: EngineApi,
  containerId: string,
  script: string,
  args: string[],
  options: { signal?: AbortSignal | undefined; stdin?: Uint8Array | undefined; what: string },
): Promise<ScriptResult> {
  const { signal, what } = options;
  if (isAborted(signal)) throw aborted(what);
  const mark = `${CALL_MARK}=${newMarkValue()}`;
  const exec = startExec(engine, {
    containerId,
    cmd: ["env", mark, "bash", "-c", script, "checkpoint", ...args],
    stdin: options.stdin,
  });
  const stop = () => exec.kill();
  signal?.addEventListener("abort", stop, { once: true });
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of exec.output) chunks.push(Buffer.from(chunk as Uint8Array));
    const code = await exec.wait();
    if (isAborted(signal)) throw aborted(what);
    return { code, output: Buffer.concat(chunks) };
  } catch (error) {
    if (!isAborted(signal))
      throw error instanceof CheckpointError
        ? error
        : new CheckpointError("failed", `Cannot ${what}: ${(error as Error).message}`, {
            cause: error,
            backend: BACKEND,
          });
    // The copy goes on in the container after this end stopped: it is ended before the caller removes its files.
    const sweep = startExec(engine, { containerId, cmd: ["bash", "-c", sweepScript({ marks: [mark] }, "KILL", 0)] });
    for await (const chunk of sweep.output) void chunk;
    await sweep.wait().catch(() => undefined);
    throw aborted(what);
  } finally {
    signal?.removeEventListener("abort", stop);
  }
}

/** The script's result, or a CheckpointError saying what it printed. */
export function succeeded(result: ScriptResult, what: string): string {
  const text = result.output.toString("utf8").trim();
  if (result.code === 0) return text;
  throw new CheckpointError("failed", `Cannot ${what}: the script in the container exited ${result.code}: ${text}`, {
    backend: BACKEND,
  });
}

/** A function, so that the compiler does not take the signal's state as fixed across awaits. */
export function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function aborted(what: string): CheckpointError {
  return new CheckpointError("aborted", `Cannot ${what}: aborted by its signal`, { backend: BACKEND });
}
