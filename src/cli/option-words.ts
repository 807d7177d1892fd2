/**
 * A backend option the library refused, in the words of the command line.
 * The library names its options as a JavaScript caller spells them
 * (`host must be a string, got undefined`); a CLI user sets them with a flag
 * or as keys of the `-c FILE.json` object, so the message says which, and a
 * missing one comes with the JSON that supplies it.
 */

import { DEFAULT_BACKEND, requiredOptionExample } from "../backends/index.js";
import { InvalidOptionError } from "../core/errors.js";
import { UsageError, type Values } from "./args.js";

/** Where the config of the session a command opens came from. */
export interface ConfigSources {
  /** The config as opened (flags, file and plan merged). */
  config: object;
  values: Values;
  /** Library option → this command's flag that sets it. */
  flags: Record<string, string>;
  /** The object read from -c FILE.json; path undefined when none was given. */
  file: { path: string | undefined; config: object };
  /** run: the plan's `environment`, under the file. */
  plan?: { path: string; config: object };
}

/** The error in CLI words (a UsageError), or the error itself when it is not a refused option. */
export function inCliWords(error: unknown, sources: ConfigSources): unknown {
  if (!(error instanceof InvalidOptionError)) return error;
  const file = sources.file.path === undefined ? undefined : { path: sources.file.path, config: sources.file.config };
  const key = error.option.split(".")[0]!;
  const flag = sources.flags[key];
  if (flag !== undefined && sources.values[flag] !== undefined) return new UsageError(`--${flag}: ${error.message}`);
  if (file !== undefined && key in file.config) return new UsageError(`${file.path}: ${error.message}`);
  if (sources.plan !== undefined && key in sources.plan.config)
    return new UsageError(`${sources.plan.path}, "environment": ${error.message}`);
  const config = sources.config as Record<string, unknown>;
  if (key !== error.option || config[key] !== undefined) return error;
  const backend = typeof config.backend === "string" ? config.backend : DEFAULT_BACKEND;
  // Only a backend's declared required option is worded as missing: another (the gateway server's own host, say)
  // keeps the library's message.
  const example = requiredOptionExample(backend, key);
  if (example === undefined) return error;
  const json = `{${JSON.stringify(key)}: ${JSON.stringify(example)}}`;
  const where =
    file !== undefined
      ? `add it to ${file.path}`
      : sources.plan !== undefined
        ? `put it in the plan's "environment", or in a JSON config file and pass -c FILE.json`
        : "put it in a JSON config file and pass -c FILE.json";
  return new UsageError(`the ${backend} backend needs ${JSON.stringify(key)}: ${where}, e.g. ${json}`);
}
