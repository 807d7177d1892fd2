/**
 * What a local session will need from this machine that can be checked
 * without opening one: its first cwd can be entered, the directories a
 * server lets requests name exist, and the sandbox, when asked for, can be
 * built here. Servers (`shellwright mcp`, `serve`, startGateway) run it
 * before they say they are ready: a session they open later fails where
 * no one reads the error, and an MCP host would show "Connected".
 */

import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { InvalidOptionError, isShellwrightError } from "../../core/errors.js";
import { describe } from "../../core/options.js";
import { checkSandboxSupport } from "./sandbox/preflight.js";

export interface LocalStart {
  /** The session's first cwd (`~` and `~/…` are the home directory, as bash reads them). */
  cwd?: unknown;
  /** The local backend's `sandbox` option. */
  sandbox?: unknown;
  /** More directories that must exist, each with the option that named it. */
  dirs?: { option: string; path: string }[];
}

/** Throws InvalidOptionError naming the option and the path (or what the sandbox lacks). */
export async function checkLocalStart(start: LocalStart): Promise<void> {
  // The other dirs first: a server's default cwd is its first root, which is then the one to name.
  const dirs = [...(start.dirs ?? []), ...(typeof start.cwd === "string" ? [{ option: "cwd", path: start.cwd }] : [])];
  for (const { option, path } of dirs) {
    const problem = enterProblem(path);
    if (problem !== undefined)
      throw new InvalidOptionError(
        option,
        `${option} ${describe(path)} ${problem} on this machine; give a directory that exists`,
      );
  }
  if (start.sandbox === undefined || start.sandbox === false) return;
  try {
    await checkSandboxSupport();
  } catch (error) {
    if (!isShellwrightError(error)) throw error;
    throw new InvalidOptionError("sandbox", error.message);
  }
}

/** Why `path` cannot be a cwd here, or undefined when it can. A `~user/…` path is left to bash. */
function enterProblem(path: string): string | undefined {
  if (path.startsWith("~") && path !== "~" && !path.startsWith("~/")) return undefined;
  const local = path === "~" ? homedir() : path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
  try {
    if (!statSync(local).isDirectory()) return "is not a directory";
    accessSync(local, fsConstants.X_OK);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : "cannot be entered";
  }
}
