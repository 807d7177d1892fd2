/**
 * A script too long for one argv string (MAX_INLINE_SCRIPT_BYTES): copied
 * into the container first on an exec's stdin, then run from there by the
 * same bash that removes the file (so `$$` is the wrapper's pid, as inline).
 */

import { randomBytes } from "node:crypto";
import { PassThrough } from "node:stream";
import type { ProcessHandle, RunOptions } from "../../core/transport.js";
import type { EngineApi } from "./engine.js";
import { startExec } from "./exec.js";

export interface StagedRun {
  engine: EngineApi;
  containerId: string;
  tempDir: string;
  /** Runs a short script the way the transport runs any call's (its marks and environment). */
  exec(script: string, options: RunOptions): ProcessHandle;
}

export function runStaged(run: StagedRun, script: string, options: RunOptions): ProcessHandle {
  const file = `${run.tempDir}/shellwright-script-${randomBytes(6).toString("hex")}.sh`;
  const output = new PassThrough();
  const stderr = options.separateStreams === true ? new PassThrough() : undefined;
  let current: ProcessHandle | undefined;
  let killed = false;
  const exited = (async () => {
    const upload = startExec(run.engine, {
      containerId: run.containerId,
      cmd: ["bash", "-c", `umask 077 && cat > ${file}`],
      stdin: Buffer.from(script),
    });
    current = upload;
    for await (const chunk of upload.output) if (!output.writableEnded) output.write(chunk);
    const uploaded = await upload.wait();
    if (uploaded !== 0 || killed) {
      output.end();
      stderr?.end();
      return uploaded === 0 ? 137 : uploaded;
    }
    const staged = run.exec(`__sw_script=$(<${file}); rm -f ${file}; eval "$__sw_script"`, options);
    current = staged;
    void (async () => {
      for await (const chunk of staged.output) if (!output.writableEnded) output.write(chunk);
    })()
      .catch(() => undefined)
      .finally(() => output.end());
    if (stderr !== undefined)
      void (async () => {
        for await (const chunk of staged.stderr ?? []) if (!stderr.writableEnded) stderr.write(chunk);
      })()
        .catch(() => undefined)
        .finally(() => stderr.end());
    return staged.wait();
  })();
  exited.catch(() => (output.end(), stderr?.end()));
  return {
    output,
    ...(stderr === undefined ? {} : { stderr }),
    wait: () => exited,
    kill: () => {
      killed = true;
      current?.kill();
    },
  };
}
