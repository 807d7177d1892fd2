/**
 * `--env NAME=VALUE` (repeatable) and `--env NAME` (the value of NAME in this
 * process's environment, as `docker run -e NAME` takes it). The values are
 * secrets as often as not: they reach the backend through a call's stdin,
 * never a command line, and no message quotes one.
 */

import { UsageError, type Values } from "./args.js";
import { rememberSecrets } from "./secrets.js";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The variables the flags give, in order (a later one wins); undefined when none. */
export function envFlag(
  values: Values,
  environment: NodeJS.ProcessEnv = process.env,
): Record<string, string> | undefined {
  const given = values.env;
  if (!Array.isArray(given) || given.length === 0) return undefined;
  const vars: Record<string, string> = {};
  for (const item of given.map(String)) {
    const equals = item.indexOf("=");
    const name = equals < 0 ? item : item.slice(0, equals);
    // Only the name is ever quoted: what follows "=" may be a secret, and a name without one is not.
    if (!NAME.test(name))
      throw new UsageError(
        equals < 0 && item.length > 0
          ? "--env needs NAME=VALUE or the NAME of a variable set here; got a word that is neither (not shown: it may be a value)"
          : `--env needs NAME=VALUE; ${JSON.stringify(name)} is not a variable name`,
      );
    if (equals >= 0) vars[name] = item.slice(equals + 1);
    else {
      const value = environment[name];
      if (value === undefined) throw new UsageError(`--env ${name}: ${name} is not set in this environment`);
      vars[name] = value;
    }
  }
  rememberSecrets({ env: vars });
  return vars;
}

/**
 * The script that exports the variables it reads from its stdin (`NAME=VALUE`
 * records, each ended by a NUL), and the stdin that carries them. Run as a
 * call of its own before the command: the command's own stdin stays its own.
 */
export function exportCall(vars: Record<string, string>): { script: string; stdin: string } {
  const stdin = Object.entries(vars)
    .map(([name, value]) => `${name}=${value}\0`)
    .join("");
  const script = [
    "__sw_bad=",
    `while IFS= builtin read -r -d '' __sw_kv; do builtin export -- "$__sw_kv" || __sw_bad=1; done`,
    "builtin unset -v __sw_kv",
    "if [[ -n $__sw_bad ]]; then builtin unset -v __sw_bad; false; else builtin unset -v __sw_bad; fi",
  ].join("\n");
  return { script, stdin };
}
