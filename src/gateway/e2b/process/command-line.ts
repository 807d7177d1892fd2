/**
 * A Start request's program as one command for the session's shell. The SDK
 * sends `commands.run(cmd)` as `/bin/bash -l -c cmd`: that `cmd` runs as the
 * session's own command (in the session's shell, from its state), which is
 * what makes a `session` sandbox keep a `cd` between calls. Anything else
 * runs as the program it names, its arguments quoted.
 */

import { shellQuote } from "../../../core/quote.js";
import { Code, ConnectError } from "@connectrpc/connect";

const SHELLS = new Set(["/bin/bash", "bash", "/usr/bin/bash", "/bin/sh", "sh"]);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function commandLine(cmd: string, args: readonly string[], envs: Record<string, string>): string {
  if (cmd === "") throw new ConnectError("process.cmd is empty; name the program to run", Code.InvalidArgument);
  const inner = shellScript(cmd, args) ?? [cmd, ...args].map(shellQuote).join(" ");
  const names = Object.keys(envs);
  for (const name of names)
    if (!NAME.test(name))
      throw new ConnectError(`process.envs has an invalid variable name ${JSON.stringify(name)}`, Code.InvalidArgument);
  if (names.length === 0) return inner;
  // `NAME=value eval …`: the variables hold for this command and what it starts, and are gone after it,
  // while a `cd` inside still moves a session sandbox's shell.
  const assignments = names.map((name) => `${name}=${shellQuote(envs[name]!)}`).join(" ");
  return `${assignments} eval ${shellQuote(inner)}`;
}

/** The script of `bash [-l] -c script` (no further arguments), else undefined. */
function shellScript(cmd: string, args: readonly string[]): string | undefined {
  if (!SHELLS.has(cmd)) return undefined;
  const rest = args[0] === "-l" || args[0] === "--login" ? args.slice(1) : args;
  return rest.length === 2 && rest[0] === "-c" ? rest[1] : undefined;
}
