/**
 * `shellwright exec [--backend NAME] [--session NAME] [--cwd DIR] [--timeout SECONDS] [--json] [--] COMMAND…`
 *
 * Runs one command. With --session the session outlives this process: cwd and
 * exported variables carry over to the next `exec` of the same name.
 */

import { fstatSync, readFileSync } from "node:fs";
import { BACKENDS, createEnvironment, type EnvironmentConfig } from "../backends/index.js";
import type { Environment, ExecuteOptions } from "../core/environment.js";
import { parseArgs, stringFlag, UsageError } from "./args.js";
import { readConfigFile } from "./config-file.js";
import { namedConfig, rememberedConfig, reopen } from "./named-session.js";
import { SessionStore } from "./session-store.js";

export const execUsage =
  "usage: shellwright exec [--backend NAME] [--config FILE.json] [--session NAME] [--cwd DIR] [--timeout SECONDS] [--json] [--] COMMAND…";

export async function main(args: string[]): Promise<number> {
  const parsed = parseArgs(args, ["backend", "config", "session", "cwd", "timeout"], ["json"]);
  const command = parsed.positionals.join(" ");
  if (command.trim() === "") throw new UsageError(`no command given; ${execUsage}`);
  const fileConfig = readConfigFile(stringFlag(parsed, "config"));
  const backend = stringFlag(parsed, "backend") ?? fileConfig.backend ?? "local";
  if (!(BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(`unknown backend ${JSON.stringify(backend)}; available: ${BACKENDS.join(", ")}`);
  }
  const options: ExecuteOptions = {};
  const timeout = stringFlag(parsed, "timeout");
  if (timeout !== undefined) {
    const seconds = Number(timeout);
    if (timeout.trim() === "" || !Number.isFinite(seconds) || seconds <= 0) {
      throw new UsageError(`--timeout must be a positive number of seconds, got ${JSON.stringify(timeout)}`);
    }
    options.timeoutMs = seconds * 1000;
  }
  const cwd = stringFlag(parsed, "cwd");
  if (cwd !== undefined) options.cwd = cwd;
  const stdin = readPipedStdin();
  if (stdin !== undefined) options.stdin = stdin;

  const name = stringFlag(parsed, "session");
  const store = new SessionStore();
  const stored = name === undefined ? undefined : store.load(name);
  if (stored !== undefined && stored.backend !== backend && parsed.flags.has("backend")) {
    throw new UsageError(`session ${JSON.stringify(name)} runs on the ${stored.backend} backend, not ${backend}`);
  }
  let config = { ...fileConfig, backend } as EnvironmentConfig;
  let env: Environment;
  if (name === undefined) env = await createEnvironment(config);
  else if (stored !== undefined) env = await reopen(stored, store);
  else {
    config = namedConfig(name, config, store);
    env = await createEnvironment(config);
  }
  try {
    const result = await env.execute(command, options);
    if (name !== undefined) {
      const now = new Date().toISOString();
      store.save({
        name,
        backend: env.backend,
        config: stored?.config ?? rememberedConfig(config, env),
        state: env.state(),
        createdAt: stored?.createdAt ?? now,
        updatedAt: now,
      });
    }
    if (parsed.flags.has("json")) process.stdout.write(`${JSON.stringify(result)}\n`);
    else process.stdout.write(result.output);
    return result.exitCode;
  } finally {
    // A named session lives on; a one-off one ends with this process.
    if (name === undefined) await env.close();
  }
}

/** Piped or redirected stdin becomes the command's stdin; a terminal or /dev/null does not. */
function readPipedStdin(): Buffer | undefined {
  try {
    const stat = fstatSync(0);
    if (!stat.isFIFO() && !stat.isFile() && !stat.isSocket()) return undefined;
    const data = readFileSync(0);
    return data.length > 0 ? data : undefined;
  } catch {
    return undefined;
  }
}
