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

export function commandLine(cmd: string, args: readonly string[]): string {
  if (cmd === "") throw new ConnectError("process.cmd is empty; name the program to run", Code.InvalidArgument);
  return shellScript(cmd, args) ?? [cmd, ...args].map(shellQuote).join(" ");
}

/** Refuses a name a shell cannot take and a value a process environment cannot hold (naming the variable only). */
export function checkEnvs(envs: Record<string, string>): void {
  for (const [name, value] of Object.entries(envs)) {
    if (!NAME.test(name))
      throw new ConnectError(`process.envs has an invalid variable name ${JSON.stringify(name)}`, Code.InvalidArgument);
    if (value.includes("\0"))
      throw new ConnectError(
        `process.envs.${name} contains a NUL byte, which no environment can hold`,
        Code.InvalidArgument,
      );
  }
}

/** A command for the session's shell with its variables, and the stdin that carries their values. */
export interface CommandWithEnvs {
  command: string;
  /** The values, each ended by a NUL; undefined when there are none. */
  stdin: string | undefined;
}

/**
 * `command` with `envs` (checked by checkEnvs) for that command only. The
 * values are not in the script (a script can be on a command line, readable
 * in /proc/PID/cmdline): the script reads them off its stdin first, then runs
 * the command with stdin from `input`: /dev/null, as a process started
 * without stdin has it, or the FIFO of its open stdin.
 */
export function withEnvs(command: string, envs: Record<string, string>, input?: string): CommandWithEnvs {
  const names = Object.keys(envs);
  const from = input === undefined ? "/dev/null" : shellQuote(input);
  if (names.length === 0)
    return { command: input === undefined ? command : `{\n${command}\n} 0<${from}`, stdin: undefined };
  const holders = names.map((_, i) => `__sw_e${i}`);
  const reads = holders.map((holder) => `IFS= builtin read -r -d '' ${holder}`).join(" && ");
  const assignments = names.map((name, i) => `${name}="$${holders[i]}"`).join(" ");
  const unset = `builtin unset -v ${holders.join(" ")}`;
  // `NAME="$holder" eval …`: the variables hold for this command and what it starts, and are gone after it,
  // while a `cd` inside still moves a session sandbox's shell. The holders go before the command runs.
  const script =
    `if ${reads}; then ${assignments} eval ${shellQuote(`${unset}; ${command}`)} 0<${from}; ` +
    `else ${unset}; builtin echo 'shellwright: the values of process.envs did not arrive' >&2; (builtin exit 125); fi`;
  return { command: script, stdin: names.map((name) => `${envs[name]}\0`).join("") };
}

/** The script of `bash [-l] -c script` (no further arguments), else undefined. */
function shellScript(cmd: string, args: readonly string[]): string | undefined {
  if (!SHELLS.has(cmd)) return undefined;
  const rest = args[0] === "-l" || args[0] === "--login" ? args.slice(1) : args;
  return rest.length === 2 && rest[0] === "-c" ? rest[1] : undefined;
}
