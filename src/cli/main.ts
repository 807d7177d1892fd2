#!/usr/bin/env node
/**
 * The `shellwright` command. Each subcommand's flags are checked against its
 * spec before anything runs, and only the subcommand that runs is loaded
 * (exec must not pay for the MCP SDK): see bench/cli-startup.mjs.
 */

import { readFileSync } from "node:fs";
import { format } from "node:util";
import { isShellwrightError } from "../core/errors.js";
import { helpText, parseCommand, UsageError } from "./args.js";
import { redactText } from "./secrets.js";
import { help as helpSpec, SUBCOMMANDS } from "./specs.js";
import { writeStderr } from "../core/stderr.js";

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
  for (const note of parsed.notes) writeStderr(`shellwright ${command}: ${note}\n`);
  const module = await sub.load();
  return module.run(parsed);
}

// Process warnings (the library's "no fast path", a dependency's deprecation) as one line in the CLI's own
// voice, not Node's "(node:PID) … (Use `node --trace-warnings …`)" form.
process.removeAllListeners("warning");
process.on("warning", (warning) => {
  const text = warning.message.replace(/^shellwright: /, "");
  writeStderr(`shellwright: warning: ${redactText(text)}\n`);
});
// The CLI owns its process: what a dependency prints with console.warn or console.error takes the same
// non-blocking way (an MCP host may never read stderr: src/core/stderr.ts).
console.warn = console.error = (...args: unknown[]) => writeStderr(`${format(...args)}\n`);

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (error) {
  const badInput =
    error instanceof UsageError ||
    (isShellwrightError(error) && (error.code === "INVALID_OPTION" || error.code === "SESSION_NOT_FOUND"));
  writeStderr(`shellwright: ${redactText(error instanceof Error ? error.message : String(error))}\n`);
  process.exitCode = badInput ? 2 : 1;
}
