/**
 * A private file written into a Daytona sandbox that is not the session's
 * yet (a rollback's new sandbox gets the saved shell state this way). The
 * bytes may hold secrets: they go up through `fs.uploadFile` into a
 * directory only its owner can enter, never on a command line, and are
 * renamed into place with mode 0600.
 */

import { randomBytes } from "node:crypto";
import { shellQuote } from "../../core/script.js";
import type { DaytonaSandbox } from "./sdk.js";

const TIMEOUT_SEC = 30;

export async function writePrivateFile(
  sandbox: DaytonaSandbox,
  tempDir: string,
  path: string,
  bytes: Uint8Array,
): Promise<void> {
  const dir = `${tempDir}/.shellwright-upload-${randomBytes(6).toString("hex")}`;
  const run = async (script: string): Promise<void> => {
    const { exitCode, result } = await sandbox.process.executeCommand(
      `bash -c ${shellQuote(script)}`,
      undefined,
      undefined,
      TIMEOUT_SEC,
    );
    if (exitCode !== 0) throw new Error(`a write into sandbox ${sandbox.id} exited ${exitCode}: ${result.trim()}`);
  };
  await run(`umask 077 && mkdir -- ${shellQuote(dir)}`);
  try {
    await sandbox.fs.uploadFile(Buffer.from(bytes), `${dir}/file`, TIMEOUT_SEC);
    const target = shellQuote(path);
    await run(
      `chmod 600 -- ${shellQuote(`${dir}/file`)} && mkdir -p -- "$(dirname -- ${target})" && mv -f -- ${shellQuote(`${dir}/file`)} ${target}`,
    );
  } finally {
    await run(`rm -rf -- ${shellQuote(dir)}`).catch(() => undefined);
  }
}
