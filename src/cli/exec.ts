/**
 * `shellwright exec [options] [--] COMMAND…` (flags: specs.ts).
 *
 * Runs one command, streaming its output to stdout as it arrives. With
 * --session the session outlives this process: cwd and exported variables
 * carry over to the next `exec` of the same name. With --json nothing is
 * streamed: the result is printed as one object at the end, so stdout stays
 * one parseable document. Notices (timeout, interrupt, cut output) go to
 * stderr so that stdout is the command's output alone.
 */

import { withOutputCap } from "../backends/shared/config.js";
import { fstatSync, readFileSync } from "node:fs";
import { BACKENDS, createEnvironment, type EnvironmentConfig } from "../backends/index.js";
import type { Environment, ExecuteOptions, ExecuteResult } from "../core/environment.js";
import {
  integerValue,
  positiveValue,
  sandboxFlag,
  stringValue,
  UsageError,
  usageLine,
  type ParsedCommand,
} from "./args.js";
import { readConfigFile } from "./config-file.js";
import { catchInterrupts } from "./interrupt.js";
import { namedConfig, rememberedConfig, reopen } from "./named-session.js";
import { inCliWords } from "./option-words.js";
import { rememberSecrets } from "./secrets.js";
import { SessionStore } from "./session-store.js";
import { exec as spec } from "./specs.js";
import { READER_GONE_EXIT_CODE, watchStdoutReader } from "./stdout-reader.js";
import { StdoutStream } from "./stdout-stream.js";
import { writeStderr } from "../core/stderr.js";

export async function run(parsed: ParsedCommand): Promise<number> {
  const { values } = parsed;
  const command = parsed.positionals.join(" ");
  if (command.trim() === "") throw new UsageError(`no command given; ${usageLine(spec)}`);
  const json = values.json === true;
  const options: ExecuteOptions = {};
  const seconds = positiveValue(values, "timeout", "seconds");
  const ms = positiveValue(values, "timeout-ms", "milliseconds");
  if (seconds !== undefined && ms !== undefined) throw new UsageError("give --timeout or --timeout-ms, not both");
  if (seconds !== undefined) options.timeoutMs = seconds * 1000;
  if (ms !== undefined) options.timeoutMs = ms;
  const maxOutputBytes = integerValue(values, "max-output-bytes", 1);
  const configPath = stringValue(values, "config");
  const fileConfig = readConfigFile(configPath);
  const backend = stringValue(values, "backend") ?? fileConfig.backend ?? "local";
  if (!(BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(`unknown backend ${JSON.stringify(backend)}; available: ${BACKENDS.join(", ")}`);
  }
  const cwd = stringValue(values, "cwd");
  if (cwd !== undefined) options.cwd = cwd;
  const stdin = readPipedStdin();
  if (stdin !== undefined) options.stdin = stdin;

  const name = stringValue(values, "session");
  const store = new SessionStore();
  const stored = name === undefined ? undefined : store.load(name);
  if (stored !== undefined && stored.backend !== backend && values.backend !== undefined) {
    throw new UsageError(`session ${JSON.stringify(name)} runs on the ${stored.backend} backend, not ${backend}`);
  }
  rememberSecrets(stored?.config);
  // The library's cap shapes the result, which only --json prints; a stream is capped here instead.
  const cap = json ? maxOutputBytes : undefined;
  let config = withOutputCap({ ...fileConfig, backend, ...sandboxFlag(values, backend) }, cap) as EnvironmentConfig;

  // Caught from here on: a signal while the session opens still closes it.
  const interrupt = catchInterrupts();
  // A reader that went away (`exec yes | head -1`) stops the command, as a signal does.
  const reader = watchStdoutReader();
  let env: Environment | undefined;
  try {
    try {
      if (name === undefined) env = await createEnvironment(config);
      else if (stored !== undefined)
        env = await reopen(stored, store, { overrides: cap === undefined ? {} : { maxOutputBytes: cap } });
      else {
        store.markPending(name);
        config = namedConfig(name, config, store);
        env = await createEnvironment(config);
      }
    } catch (error) {
      // A reopened session's config is the stored one, which no flag or file of this process set.
      if (stored !== undefined) throw error;
      throw inCliWords(error, {
        config,
        values,
        flags: { backend: "backend", sandbox: "sandbox", maxOutputBytes: "max-output-bytes" },
        file: { path: configPath, config: fileConfig },
      });
    }
    const stream = json ? undefined : new StdoutStream(maxOutputBytes);
    const result = await env.execute(command, {
      ...options,
      signal: AbortSignal.any([interrupt.signal, reader.signal]),
      ...(stream ? { onOutput: (text: string) => stream.write(text) } : {}),
    });
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
    if (reader.gone()) return interrupt.exitCode() ?? READER_GONE_EXIT_CODE;
    if (stream) {
      const notice = finalNotice(result);
      if (notice !== undefined) writeStderr(`shellwright: ${notice}\n`);
      if (stream.cut)
        writeStderr(
          `shellwright: output cut: printed the first ${stream.printedBytes} of ${stream.totalBytes} bytes (--max-output-bytes raises the cap)\n`,
        );
    } else {
      await reader.write(`${JSON.stringify(result)}\n`);
      if (reader.gone()) return interrupt.exitCode() ?? READER_GONE_EXIT_CODE;
      if (result.truncated)
        writeStderr(
          "shellwright: output cut: the result keeps its head and tail (--max-output-bytes raises the cap)\n",
        );
    }
    return interrupt.exitCode() ?? result.exitCode;
  } finally {
    // A named session lives on; a one-off one ends with this process.
    try {
      if (name === undefined) await env?.close();
    } finally {
      interrupt.dispose();
      reader.dispose();
    }
  }
}

/** The notice the library appended to the output (a timeout, an interrupt), which the stream never carries. */
function finalNotice(result: ExecuteResult): string | undefined {
  if (!result.timedOut && !result.interrupted) return undefined;
  return result.output.slice(result.output.lastIndexOf("\n") + 1);
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
