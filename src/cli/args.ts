/**
 * The one argv parser of the CLI: each subcommand declares its flags (a
 * CommandSpec in specs.ts) and Node's util.parseArgs reads them, so every
 * subcommand takes `--flag=value` and `--flag value`, its short aliases,
 * `-h/--help`, and refuses an unknown flag the same way. Usage errors are
 * thrown as UsageError and printed as one line, exit 2.
 */

import { parseArgs, type ParseArgsConfig } from "node:util";
import { backendsTaking, DEFAULT_BACKEND } from "../backends/index.js";

export class UsageError extends Error {
  override name = "UsageError";
}

export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  /** Repeatable: the values come as an array. */
  multiple?: boolean;
  /** The value's placeholder in the help, e.g. "NAME". */
  value?: string;
  help: string;
  /** Another spelling of option `aliasOf`; the value is stored under that name. */
  aliasOf?: string;
  /** An old spelling: it still works, with a one-line note on stderr. */
  deprecated?: boolean;
}

export interface CommandSpec {
  name: string;
  /** One line for `shellwright help`. */
  summary: string;
  /** The positionals as the usage line shows them, e.g. "[--] COMMAND…". */
  positionals: string;
  minPositionals: number;
  maxPositionals: number;
  /** The first positional starts a command line: later words are its own, flags included. */
  commandTail?: boolean;
  options: Record<string, OptionSpec>;
  /** Paragraphs after the option list. */
  details?: string;
}

export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface ParsedCommand {
  values: Values;
  positionals: string[];
  help: boolean;
  /** Deprecation notes, for the caller to print on stderr. */
  notes: string[];
}

const HELP: OptionSpec = { type: "boolean", short: "h", help: "show this help" };

export function usageLine(spec: CommandSpec): string {
  return `usage: shellwright ${spec.name}${Object.keys(spec.options).length > 0 ? " [options]" : ""}${spec.positionals ? ` ${spec.positionals}` : ""}`;
}

export function helpText(spec: CommandSpec): string {
  const rows = Object.entries({ ...spec.options, help: HELP })
    .filter(([, option]) => !option.deprecated)
    .map(([name, option]) => {
      const flag = `${option.short ? `-${option.short}, ` : "    "}--${name}${option.value ? ` ${option.value}` : ""}`;
      return flag.length < 26 ? `  ${flag.padEnd(26)}${option.help}` : `  ${flag}\n  ${"".padEnd(26)}${option.help}`;
    });
  const deprecated = Object.entries(spec.options)
    .filter(([, option]) => option.deprecated)
    .map(([name, option]) => `--${name} (use --${option.aliasOf})`);
  return [
    usageLine(spec),
    "",
    spec.summary,
    "",
    "options:",
    ...rows,
    ...(deprecated.length > 0 ? ["", `still accepted: ${deprecated.join(", ")}`] : []),
    ...(spec.details ? ["", spec.details] : []),
    "",
  ].join("\n");
}

/** Parses a subcommand's arguments against its spec; throws UsageError (with the usage line) on bad input. */
export function parseCommand(spec: CommandSpec, args: readonly string[]): ParsedCommand {
  const options = { ...spec.options, help: HELP };
  const config = Object.fromEntries(
    Object.entries(options).map(([name, option]) => [
      name,
      {
        type: option.type,
        ...(option.short ? { short: option.short } : {}),
        ...(option.multiple ? { multiple: true } : {}),
      },
    ]),
  );
  let flagArgs = joinDashValues(args, options);
  let tail: string[] = [];
  if (spec.commandTail) {
    // Flags stop at the first word of the command: `exec ls -la` runs `ls -la`.
    const { tokens } = parseArgs({
      args: flagArgs,
      options: config,
      strict: false,
      allowPositionals: true,
      tokens: true,
    });
    const first = tokens.find((token) => token.kind === "positional" || token.kind === "option-terminator");
    if (first !== undefined) {
      tail = flagArgs.slice(first.kind === "option-terminator" ? first.index + 1 : first.index);
      flagArgs = flagArgs.slice(0, first.index);
    }
  }
  let parsed;
  try {
    parsed = parseArgs({ args: flagArgs, options: config, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(`${describeParseError(error, flagArgs, config)}; ${usageLine(spec)}`);
  }
  const values: Values = { ...parsed.values };
  const notes: string[] = [];
  for (const [name, option] of Object.entries(spec.options)) {
    if (option.aliasOf === undefined || values[name] === undefined) continue;
    if (option.deprecated) notes.push(`--${name} is deprecated; use --${option.aliasOf}`);
    if (values[option.aliasOf] !== undefined)
      throw new UsageError(`--${name} and --${option.aliasOf} are the same option; give one; ${usageLine(spec)}`);
    values[option.aliasOf] = values[name];
    delete values[name];
  }
  const help = values.help === true;
  delete values.help;
  const positionals = [...parsed.positionals, ...tail];
  if (!help) {
    if (positionals.length < spec.minPositionals)
      throw new UsageError(`missing ${spec.positionals}; ${usageLine(spec)}`);
    if (positionals.length > spec.maxPositionals)
      throw new UsageError(
        `unexpected argument ${JSON.stringify(positionals[spec.maxPositionals])}; ${usageLine(spec)}`,
      );
  }
  return { values, positionals, help, notes };
}

/** `--timeout -1` would read as a missing value: a negative number is taken as the value it looks like. */
function joinDashValues(args: readonly string[], options: Record<string, OptionSpec>): string[] {
  const valued = new Set<string>();
  for (const [name, option] of Object.entries(options)) {
    if (option.type !== "string") continue;
    valued.add(`--${name}`);
    if (option.short) valued.add(`-${option.short}`);
  }
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      out.push(...args.slice(i));
      break;
    }
    const next = args[i + 1];
    if (valued.has(arg) && next !== undefined && /^-[\d.]/.test(next)) {
      // A short flag takes its value attached (`-t-5`); `-t=-5` would read as the value "=-5".
      out.push(arg.startsWith("--") ? `${arg}=${next}` : `${arg}${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/**
 * The parse error in the spelling the user typed: Node's message names
 * `-t, --timeout` whichever was given, so the tokens of a lenient parse are
 * read again and the first bad one is named by its raw spelling.
 */
function describeParseError(error: unknown, args: string[], config: ParseArgsConfig["options"]): string {
  const { message } = error as { message?: string };
  const { tokens } = parseArgs({ args, options: config, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const option = config?.[token.name];
    if (option === undefined) return `unknown option ${token.rawName}`;
    if (option.type === "string" && token.value === undefined) return `${token.rawName} needs a value`;
    if (option.type === "boolean" && token.value !== undefined) return `${token.rawName} takes no value`;
  }
  return message ?? String(error);
}

export function stringValue(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/** A whole number in [min, max], or undefined when the flag was not given. */
export function integerValue(values: Values, name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const text = stringValue(values, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    const range = max < Number.MAX_SAFE_INTEGER ? ` from ${min} to ${max}` : min > 0 ? ` of at least ${min}` : "";
    throw new UsageError(`--${name} needs a whole number${range}, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** A positive number (fractions allowed), or undefined when the flag was not given. */
export function positiveValue(values: Values, name: string, unit: string): number | undefined {
  const text = stringValue(values, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value <= 0)
    throw new UsageError(`--${name} must be a positive number of ${unit}, got ${JSON.stringify(text)}`);
  return value;
}

/**
 * `--sandbox`: the local backend's `sandbox: true`. Other backends have their
 * own isolation (a container, a remote machine), so the flag is refused there.
 */
export function sandboxFlag(values: Values, backend: string | undefined): { sandbox?: true } {
  if (values.sandbox !== true) return {};
  const takers: readonly string[] = backendsTaking("sandbox");
  const name = backend ?? DEFAULT_BACKEND;
  if (!takers.includes(name)) {
    throw new UsageError(
      `--sandbox is for the ${takers.join(", ")} backend; the ${name} backend already runs elsewhere`,
    );
  }
  return { sandbox: true };
}
