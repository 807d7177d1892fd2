/**
 * An injected SDK client (modal, daytona): checked for the services the
 * backend calls, so a wrong object fails at createEnvironment, not at the
 * first command.
 */

import { InvalidOptionError } from "../../core/errors.js";
import { describe } from "../../core/options.js";

export function sdkClient<T>(name: string, value: unknown, services: string[]): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null)
    throw new InvalidOptionError(name, `${name} must be an SDK client object, got ${describe(value)}`);
  for (const service of services) {
    if (!(service in value))
      throw new InvalidOptionError(name, `${name} must be an SDK client with \`${service}\`; it has none`);
  }
  return value as T;
}
