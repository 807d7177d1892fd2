#!/usr/bin/env node
/**
 * The `shellwright` command. Each subcommand's flags are checked against its
 * spec before anything runs, and only the subcommand that runs is loaded
 * (exec must not pay for the MCP SDK): see bench/cli-startup.mjs.
 */

import { readFileSync } from "node:fs";
import { isShellwrightError } from "../core/errors.js";
import { helpText, parseCommand, UsageError } from "./args.js";
import { redactText } from "./secrets.js";
import { help as helpSpec, SUBCOMMANDS } from "./specs.js";

const usage = `usage: shellwright <command> [options]

commands:
${Object.values(SUBCOMMANDS)
  .map(({ spec }) => `  ${spec.name.padEnd(10)}${spec.summary.replace(/\n/g, " ").split(/(?<=\.) /)[0]}`)
  .join("\n")}
  help CMD  the options of a command (or: shellwright CMD --help)

  -v, --version   print the version
`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h") {
    process.stdout.write(usage);
    return command === undefined ? 2 : 0;
  }
  if (command === "--version" || command === "-v") {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (command === "help") {
    const parsed = parseCommand(helpSpec, rest);
    const topic = parsed.positionals[0];
    if (topic === undefined || parsed.help) {
      process.stdout.write(usage);
      return 0;
    }
    const sub = SUBCOMMANDS[topic];
    if (sub === undefined) throw new UsageError(`unknown command ${JSON.stringify(topic)}; run \`shellwright help\``);
    process.stdout.write(helpText(sub.spec));
    return 0;
  }
  const sub = SUBCOMMANDS[command];
  if (sub === undefined) throw new UsageError(`unknown command ${JSON.stringify(command)}; run \`shellwright help\``);
  const parsed = parseCommand(sub.spec, rest);
  if (parsed.help) {
    process.stdout.write(helpText(sub.spec));
    return 0;
  }
  for (const note of parsed.notes) process.stderr.write(`shellwright ${command}: ${note}\n`);
  const module = await sub.load();
  return module.run(parsed);
}

// Process warnings (the library's "no fast path", a dependency's deprecation) as one line in the CLI's own
// voice, not Node's "(node:PID) … (Use `node --trace-warnings …`)" form.
process.removeAllListeners("warning");
process.on("warning", (warning) => {
  const text = warning.message.replace(/^shellwright: /, "");
  process.stderr.write(`shellwright: warning: ${redactText(text)}\n`);
});

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (error) {
  const badInput =
    error instanceof UsageError ||
    (isShellwrightError(error) && (error.code === "INVALID_OPTION" || error.code === "SESSION_NOT_FOUND"));
  process.stderr.write(`shellwright: ${redactText(error instanceof Error ? error.message : String(error))}\n`);
  process.exitCode = badInput ? 2 : 1;
}
