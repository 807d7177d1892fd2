/**
 * `shellwright mcp [--backend NAME] [--cwd DIR] [--config FILE]`
 *
 * An MCP server on stdio: the Shellwright tools over one session, opened at
 * the first tool call and closed when the client disconnects. Everything but
 * the protocol goes to stderr.
 */

import { readFileSync } from "node:fs";
import { BACKENDS, createEnvironment, type EnvironmentConfig } from "../backends/index.js";
import { serveStdio } from "../mcp/stdio.js";
import { parseArgs, stringFlag, UsageError } from "./args.js";

export const mcpUsage = "usage: shellwright mcp [--backend NAME] [--cwd DIR] [--config FILE.json]";

export async function main(args: string[]): Promise<number> {
  const parsed = parseArgs(args, ["backend", "cwd", "config"], []);
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}; ${mcpUsage}`);
  const config = environmentConfig(stringFlag(parsed, "config"));
  const backend = stringFlag(parsed, "backend") ?? (config.backend as string | undefined) ?? "local";
  if (!(BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(`unknown backend ${JSON.stringify(backend)}; available: ${BACKENDS.join(", ")}`);
  }
  config.backend = backend as EnvironmentConfig["backend"];
  const cwd = stringFlag(parsed, "cwd");
  if (cwd !== undefined) config.cwd = cwd;

  await serveStdio({ createSession: () => createEnvironment(config) });
  return 0;
}

/** The environment config from a JSON file (options a backend needs beyond the flags: image, host, …). */
function environmentConfig(path: string | undefined): EnvironmentConfig {
  if (path === undefined) return {};
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`--config ${JSON.stringify(path)} cannot be read: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--config ${JSON.stringify(path)} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError(`--config ${JSON.stringify(path)} must hold one JSON object (the environment config), got ${Array.isArray(value) ? "an array" : typeof value}`);
  }
  return value as EnvironmentConfig;
}
