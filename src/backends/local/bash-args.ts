/**
 * What a local call's bash is started with: its arguments (the script inline, or in a file of the session's state
 * dir when it is too long for one argv string) and the environment the session's first shell starts from.
 */

import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { withoutCredentials } from "../../core/credentials.js";
import { shellQuote } from "../../core/script.js";
import { MAX_INLINE_SCRIPT_BYTES } from "../../core/transport.js";

/**
 * bash's arguments for `script`, and the file that holds it when it went to one (removed once the call exits).
 * With a session cgroup the wrapper joins it before its first fork: Node's write after the spawn can lose that
 * race, this line cannot. A builtin, so it costs one write, and first, so nothing of the user's runs before it.
 */
export function bashArgs(
  script: string,
  stateDir: string,
  cgroupPath: string | undefined,
): { args: string[]; scriptFile?: string } {
  if (cgroupPath !== undefined)
    script = `builtin echo $$ 2>/dev/null > ${shellQuote(`${cgroupPath}/cgroup.procs`)}\n${script}`;
  if (Buffer.byteLength(script) <= MAX_INLINE_SCRIPT_BYTES) return { args: ["-c", script] };
  const scriptFile = join(stateDir, `script-${randomBytes(6).toString("hex")}.sh`);
  writeFileSync(scriptFile, script, { mode: 0o600 });
  return { args: [scriptFile], scriptFile };
}

/**
 * The environment the session's first shell starts from: this process's, without Shellwright's own tokens
 * (core/credentials.ts), and the session's `env`. Its SHLVL is this process's (a nested shell stays nested), but at
 * least 1: `exec node app.js` from a script leaves 0, and a bash at level 1 with a socket for stdin reads ~/.bashrc.
 */
export function startEnv(sessionEnv: Record<string, string> | undefined): Record<string, string | undefined> {
  const env = { ...withoutCredentials(process.env), ...sessionEnv };
  const level = Number(env.SHLVL);
  return { ...env, SHLVL: Number.isInteger(level) && level >= 1 ? String(level) : "1" };
}
