#!/usr/bin/env node
/** The `shellwright` command: dispatches to one module per subcommand. */

import { readFileSync } from "node:fs";
import { isShellwrightError } from "../core/errors.js";
import { UsageError } from "./args.js";
import { main as exec } from "./exec.js";
import { main as mcp } from "./mcp.js";
import { main as runPlan } from "./run.js";
import { main as serve } from "./serve.js";
import { close, list } from "./sessions.js";

const commands: Record<string, (args: string[]) => Promise<number>> = {
  exec,
  run: runPlan,
  serve,
  mcp,
  sessions: list,
  close,
};

const usage = `usage: shellwright <command> [options]

commands:
  exec [--backend NAME] [--session NAME] [--cwd DIR] [--timeout SECONDS] [--json] [--] COMMAND…
                      run one command (in a named session that outlives the process, with --session)
  run PLAN.json [--backend NAME] [--check]
                      play a plan of tool calls in one session, one JSON line per call
  serve [--port N] [--backend NAME] …
                      serve sessions over HTTP (token required; see docs/gateway.md)
  mcp [--backend NAME] [--http …]
                      serve the tools over the Model Context Protocol (stdio; see docs/agents.md)
  sessions [--json]   list named sessions
  close NAME          end a named session and remove its state
`;

async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(usage);
    return command === undefined ? 2 : 0;
  }
  if (command === "--version") {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const handler = commands[command];
  if (handler === undefined)
    throw new UsageError(`unknown command ${JSON.stringify(command)}; run \`shellwright help\``);
  return handler(rest);
}

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (error) {
  const badInput =
    error instanceof UsageError ||
    (isShellwrightError(error) && (error.code === "INVALID_OPTION" || error.code === "SESSION_NOT_FOUND"));
  process.stderr.write(`shellwright: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = badInput ? 2 : 1;
}
