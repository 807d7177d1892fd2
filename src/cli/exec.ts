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

import { commandOf } from "./command-words.js";
import { envFlag, exportCall } from "./env-flag.js";
import { INTERACTIVE_SHELL } from "./interactive-shell.js";
import { fstatSync, readFileSync } from "node:fs";
import {
  BACKENDS,
  backendsTaking,
  createEnvironment,
  DEFAULT_BACKEND,
  withOutputCap,
  type EnvironmentConfig,
} from "../backends/index.js";
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
import { namedConfig, oneShot, rememberedConfig, reopen } from "./named-session.js";
import { inCliWords } from "./option-words.js";
import { rememberSecrets } from "./secrets.js";
import { SessionStore } from "./session-store.js";
import { exec as spec } from "./specs.js";
import { READER_GONE_EXIT_CODE, watchStdoutReader } from "./stdout-reader.js";
import { StdoutStream } from "./stdout-stream.js";
import { writeStderr } from "../core/stderr.js";

/** The backends whose config has an `image`. */
const IMAGE_BACKENDS: readonly string[] = backendsTaking("image");

/** `shellwright exec`. */
export function run(parsed: ParsedCommand): Promise<number> {
  const command = commandOf(parsed.positionals);
  if (command.trim() === "") throw new UsageError(`no command given; ${usageLine(spec)}`);
  const pty = parsed.values.pty === true;
  if (pty)
    for (const flag of ["json", "max-output-bytes"])
      if (parsed.values[flag] !== undefined)
        throw new UsageError(`--${flag} and --pty: a terminal's output is a stream, printed as it comes`);
  return runIn(parsed, command, pty);
}

/** `shellwright shell`: an interactive bash onto the session's backend, with its state. */
export function shell(parsed: ParsedCommand): Promise<number> {
  return runIn(parsed, INTERACTIVE_SHELL, true);
}

async function runIn(parsed: ParsedCommand, command: string, pty: boolean): Promise<number> {
  const { values } = parsed;
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
  const image = stringValue(values, "image");
  // `--image` alone means a container.
  const backend =
    stringValue(values, "backend") ?? fileConfig.backend ?? (image === undefined ? DEFAULT_BACKEND : "docker");
  if (!(BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(`unknown backend ${JSON.stringify(backend)}; available: ${BACKENDS.join(", ")}`);
  }
  if (image !== undefined && !IMAGE_BACKENDS.includes(backend))
    throw new UsageError(
      `--image is for the ${IMAGE_BACKENDS.slice(0, -1).join(", ")} and ${IMAGE_BACKENDS.at(-1)} backends, not ${backend}`,
    );
  const cwd = stringValue(values, "cwd");
  if (cwd !== undefined) options.cwd = cwd;
  const vars = envFlag(values);
  // Under a terminal, stdin is the keyboard, read as it is typed.
  const stdin = pty ? undefined : readPipedStdin();
  if (stdin !== undefined) options.stdin = stdin;

  const name = stringValue(values, "session");
  const store = new SessionStore();
  const stored = name === undefined ? undefined : store.load(name);
  if (stored !== undefined && stored.backend !== backend && values.backend !== undefined) {
    throw new UsageError(`session ${JSON.stringify(name)} runs on the ${stored.backend} backend, not ${backend}`);
  }
  if (stored !== undefined && image !== undefined)
    throw new UsageError(`session ${JSON.stringify(name)} exists: --image is for a new session`);
  rememberSecrets(stored?.config);
  // The library's cap shapes the result, which only --json prints; a stream is capped here instead.
  const cap = json ? maxOutputBytes : undefined;
  // The default backend is left for the library to pick, so a file with `host` and no `backend` is blamed on that.
  const named =
    values.backend !== undefined || fileConfig.backend !== undefined || image !== undefined ? { backend } : {};
  let config = withOutputCap(
    { ...fileConfig, ...named, ...(image === undefined ? {} : { image }), ...sandboxFlag(values, backend) },
    cap,
  ) as EnvironmentConfig;

  // Caught from here on: a signal while the session opens still closes it.
  const interrupt = catchInterrupts();
  // A reader that went away (`exec yes | head -1`) stops the command, as a signal does.
  const reader = watchStdoutReader();
  let env: Environment | undefined;
  try {
    try {
      // One command: a fast-path helper would be started only to be thrown away (and, where none was built,
      // every exec would say so).
      if (name === undefined) env = await createEnvironment(oneShot(config));
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
        flags: { backend: "backend", sandbox: "sandbox", maxOutputBytes: "max-output-bytes", image: "image" },
        file: { path: configPath, config: fileConfig },
      });
    }
    const signal = AbortSignal.any([interrupt.signal, reader.signal]);
    if (vars !== undefined) {
      // Its own call, values on its stdin: the command's stdin stays the command's.
      const exported = exportCall(vars);
      const set = await env.execute(exported.script, { stdin: exported.stdin, signal });
      // bash names the variable it refused (`UID: readonly variable`), never its value.
      if (set.exitCode !== 0)
        throw new UsageError(
          `--env: ${set.output.trim().replace(/^bash: line \d+: /gm, "") || `exit code ${set.exitCode}`}`,
        );
    }
    const stream = json || pty ? undefined : new StdoutStream(maxOutputBytes);
    const result: Pick<ExecuteResult, "exitCode" | "timedOut" | "interrupted" | "output" | "truncated"> = pty
      ? await inTerminal(env, command, { ...options, signal })
      : await env.execute(command, {
          ...options,
          signal,
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
    if (!json) {
      const notice = finalNotice(result);
      if (notice !== undefined) writeStderr(`shellwright: ${notice}\n`);
      if (stream?.cut)
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

/** The command under a pseudo-terminal attached to this one, its end in the shape of a result. */
async function inTerminal(
  env: Environment,
  command: string,
  options: ExecuteOptions & { signal: AbortSignal },
): Promise<Pick<ExecuteResult, "exitCode" | "timedOut" | "interrupted" | "output" | "truncated">> {
  const { attachPty } = await import("./pty-attach.js");
  const attached = await attachPty(env, command, options);
  const seconds = options.timeoutMs === undefined ? 0 : options.timeoutMs / 1000;
  return {
    exitCode: attached.exitCode,
    timedOut: attached.timedOut,
    interrupted: options.signal.aborted,
    truncated: false,
    output: attached.timedOut ? `[Command timed out after ${seconds}s]` : "",
  };
}

/** The notice the library appended to the output (a timeout, an interrupt), which the stream never carries. */
function finalNotice(result: Pick<ExecuteResult, "timedOut" | "interrupted" | "output">): string | undefined {
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
