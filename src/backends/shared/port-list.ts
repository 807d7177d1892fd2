/** The `ports` option of the backends that must open a port before a server listens on it (docker, modal). */

import { InvalidOptionError } from "../../core/errors.js";
import { describe } from "../../core/options.js";

export function portList(name: string, value: unknown): number[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    throw new InvalidOptionError(name, `${name} must be an array of port numbers, got ${describe(value)}`);
  for (const port of value as unknown[])
    if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535)
      throw new InvalidOptionError(name, `${name} entries must be integers from 1 to 65535, got ${describe(port)}`);
  return [...new Set(value as number[])];
}
