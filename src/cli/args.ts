/**
 * A small argv parser: flags with values, boolean flags, `--` ends the flags.
 * Usage errors are thrown as UsageError and printed as one line, exit 2.
 */

export class UsageError extends Error {
  override name = "UsageError";
}

export interface ParsedArgs {
  flags: Map<string, string | true>;
  positionals: string[];
}

/** @param valued flags that take a value; @param booleans flags that do not. */
export function parseArgs(args: string[], valued: readonly string[], booleans: readonly string[]): ParsedArgs {
  const flags = new Map<string, string | true>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--") || positionals.length > 0) {
      // The first positional starts the command: later words belong to it.
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    if (valued.includes(name)) {
      const value = eq >= 0 ? arg.slice(eq + 1) : args[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      flags.set(name, value);
    } else if (booleans.includes(name) && eq < 0) {
      flags.set(name, true);
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  return { flags, positionals };
}

export function stringFlag(parsed: ParsedArgs, name: string): string | undefined {
  const value = parsed.flags.get(name);
  return typeof value === "string" ? value : undefined;
}
