/**
 * Option validation, done once at each entry point. Every error names the
 * option and the value it got.
 */

import { credentialRefusal, isCredentialEnvVar } from "./credentials.js";
import { InvalidOptionError } from "./errors.js";

/**
 * A value that may be a secret (an env value), described by its kind and
 * size only: error messages end up in logs, HTTP answers and model context.
 */
export function describeSecret(value: unknown): string {
  if (typeof value === "string") return `a string of ${value.length} characters`;
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return aType(value);
}

/** "an object", "a function": the value's type with its article. */
function aType(value: unknown): string {
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

export function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === "number" || typeof value === "boolean" || value === null || value === undefined)
    return String(value);
  if (Array.isArray(value)) return "an array";
  return aType(value);
}

export function positiveNumber(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new InvalidOptionError(name, `${name} must be a positive number of milliseconds, got ${describe(value)}`);
  }
  return value;
}

export function fraction(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value >= 0 && value <= 1)) {
    throw new InvalidOptionError(name, `${name} must be a number from 0 to 1, got ${describe(value)}`);
  }
  return value;
}

export function positiveInteger(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
    throw new InvalidOptionError(name, `${name} must be a positive integer, got ${describe(value)}`);
  }
  return value;
}

/** For an option whose absence means "no limit" or "the backend's own default" rather than a number. */
export function optionalPositiveInteger(name: string, value: unknown): number | undefined {
  return value === undefined ? undefined : positiveInteger(name, value, 1);
}

export function optionalPositiveNumber(name: string, value: unknown): number | undefined {
  return value === undefined ? undefined : positiveNumber(name, value, 1);
}

/** A string bash can receive: no NUL byte (argv and files cannot carry one). */
export function shellString(name: string, value: unknown, options: { allowEmpty?: boolean } = {}): string {
  if (typeof value !== "string") throw new InvalidOptionError(name, `${name} must be a string, got ${describe(value)}`);
  if (!options.allowEmpty && value.trim() === "") throw new InvalidOptionError(name, `${name} must not be empty`);
  if (value.includes("\0"))
    throw new InvalidOptionError(name, `${name} must not contain a NUL byte, got ${describe(value)}`);
  return value;
}

export function optionalShellString(name: string, value: unknown): string | undefined {
  return value === undefined ? undefined : shellString(name, value);
}

/**
 * An env-like object of variable names to values. Its values are treated as
 * secrets: an error names the variable and never shows its value. A variable
 * that holds one of Shellwright's own credentials is refused (src/core/credentials.ts).
 */
export function stringRecord(name: string, value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidOptionError(name, `${name} must be an object of strings, got ${describeSecret(value)}`);
  }
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, item] of Object.entries(value)) {
    variableName(name, key);
    if (isCredentialEnvVar(key)) throw new InvalidOptionError(`${name}.${key}`, credentialRefusal(name, key));
    const option = `${name}.${key}`;
    if (typeof item !== "string")
      throw new InvalidOptionError(option, `${option} must be a string, got ${describeSecret(item)}`);
    if (item.includes("\0"))
      throw new InvalidOptionError(option, `${option} must not contain a NUL byte (its value is not shown)`);
    out[key] = item;
  }
  return out;
}

/**
 * Checks an environment variable name. A name that is not one is shown only
 * up to its first "=": `"API_KEY=sk-…"` in place of a name holds a value.
 */
export function variableName(option: string, name: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return name;
  const equals = name.indexOf("=");
  if (equals >= 0)
    throw new InvalidOptionError(
      option,
      `${option} has ${describe(name.slice(0, equals))}=… where a variable name belongs; pass NAME: value, not "NAME=value" (the value is not shown)`,
    );
  throw new InvalidOptionError(option, `${option} has an invalid variable name ${describe(name)}`);
}

/** Rejects unknown keys (typos) and the options that were removed, each with its own message. */
export function rejectUnknown(where: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (key === "persistent") {
      throw new InvalidOptionError(
        "persistent",
        "The `persistent` option was removed: every command runs in a fresh bash, and cwd and exported variables persist through the session snapshot. Remove the option.",
      );
    }
    if (!known.includes(key)) {
      throw new InvalidOptionError(key, `Unknown ${where} option ${describe(key)}; known options: ${known.join(", ")}`);
    }
  }
}

export function plainObject(name: string, value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidOptionError(name, `${name} must be an object, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

export function optionalBoolean(name: string, value: unknown): boolean | undefined {
  if (value === undefined || typeof value === "boolean") return value;
  throw new InvalidOptionError(name, `${name} must be true or false, got ${describe(value)}`);
}
