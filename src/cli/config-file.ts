/** The environment config from a JSON file: the options a backend needs beyond the flags (an image, a host, …). */

import { readFileSync } from "node:fs";
import type { EnvironmentConfig } from "../backends/index.js";
import { jsonSyntaxProblem } from "../core/json-error.js";
import { UsageError } from "./args.js";
import { rememberSecrets } from "./secrets.js";

export function readConfigFile(path: string | undefined, flag = "--config"): EnvironmentConfig {
  if (path === undefined) return {};
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`${flag} ${JSON.stringify(path)} cannot be read: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag} ${JSON.stringify(path)} is not valid JSON: ${jsonSyntaxProblem(error, text)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError(
      `${flag} ${JSON.stringify(path)} must hold one JSON object (the environment config), got ${Array.isArray(value) ? "an array" : typeof value}`,
    );
  }
  rememberSecrets(value);
  return value as EnvironmentConfig;
}
