/**
 * `shellwright serve`: runs a gateway until SIGINT or SIGTERM.
 *
 * The token comes from --token-file (mode 600) or $SHELLWRIGHT_GATEWAY_TOKEN,
 * never from a flag: a flag would show in `ps`.
 */

import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { isShellwrightError } from "../core/errors.js";
import {
  helpText,
  integerValue,
  parseCommand,
  sandboxFlag,
  stringValue,
  UsageError,
  type ParsedCommand,
  type Values,
} from "./args.js";
import { readConfigFile } from "./config-file.js";
import { noTokenCheck } from "./no-token.js";
import { inCliWords, type ConfigSources } from "./option-words.js";
import { poolSizeFlag } from "./pool-flag.js";
import { backendName, hideFromSandboxes, type EnvironmentConfig } from "../backends/index.js";
import { scrubCredentials } from "../core/credentials.js";
import { loadToken, TokenSourceError } from "../http/token-source.js";
import { TOKEN_ENV_VAR } from "../http/gateway-protocol.js";
import { startGateway, type GatewayOptions } from "../gateway/server.js";
import { apiNames, type ApiName } from "../gateway/apis.js";
import { redactText } from "./secrets.js";
import { serve as spec } from "./specs.js";
import { writeStderr } from "../core/stderr.js";

export const USAGE = helpText(spec);

export interface ServeIo {
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Aborting stops the server (main() wires SIGINT and SIGTERM to it). */
  signal: AbortSignal;
}

/** `node dist/cli/serve.js ARGS…`: parses, then serves until SIGINT or SIGTERM. */
export function main(args: string[]): Promise<number> {
  return withSignals((io) => serve(args, io));
}

/** `shellwright serve …`, whose flags main.ts has already parsed. */
export function run(parsed: ParsedCommand): Promise<number> {
  return withSignals((io) => serveParsed(parsed, io));
}

async function withSignals(body: (io: ServeIo) => Promise<number>): Promise<number> {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return await body({
      env: process.env,
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => writeStderr(text),
      signal: stop.signal,
    });
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** main() with its inputs and outputs passed in; resolves with the exit code once the server has stopped. */
export async function serve(args: string[], io: ServeIo): Promise<number> {
  let parsed: ParsedCommand;
  try {
    parsed = parseCommand(spec, args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`shellwright serve: ${error.message}\n`);
    return 2;
  }
  if (parsed.help) {
    io.stdout(USAGE);
    return 0;
  }
  for (const note of parsed.notes) io.stderr(`shellwright serve: ${note}\n`);
  return serveParsed(parsed, io);
}

async function serveParsed(args: ParsedCommand, io: ServeIo): Promise<number> {
  let options: GatewayOptions;
  let sources: ConfigSources;
  try {
    const parsed = serveArgs(args.values);
    sources = parsed.sources;
    const token = loadToken({ tokenFile: parsed.tokenFile, envVar: TOKEN_ENV_VAR, env: io.env });
    // A sandboxed session must not read the server's token; the gateway masks it in what sessions send back too.
    if (parsed.tokenFile !== undefined) hideFromSandboxes(parsed.tokenFile);
    // Read once; from here on no child of this server (a session's bash, ssh, docker) inherits it.
    scrubCredentials(io.env);
    // Checked here, in the flags' words: startGateway's own refusal names its options (insecureNoAuth).
    if (token === undefined)
      noTokenCheck({
        insecureNoAuth: parsed.insecureNoAuth,
        host: parsed.options.host ?? "127.0.0.1",
        envVar: TOKEN_ENV_VAR,
      });
    options = {
      ...parsed.options,
      ...(token === undefined ? { insecureNoAuth: true } : { token }),
      log: (m) => io.stderr(`shellwright serve: ${m}\n`),
    };
    if (token !== undefined && parsed.insecureNoAuth)
      throw new UsageError("--insecure-no-auth was given but a token is set; drop one of them");
  } catch (error) {
    if (error instanceof UsageError || error instanceof TokenSourceError) {
      io.stderr(`shellwright serve: ${redactText(error.message)}\n`);
      return 2;
    }
    throw error;
  }

  let gateway;
  try {
    gateway = await startGateway(options);
  } catch (caught) {
    // Only a pool (--pool-size) opens a session here; without one a refused config reaches each client.
    const error = inCliWords(caught, sources);
    if (
      error instanceof UsageError ||
      isShellwrightError(error) ||
      (error as { code?: string }).code === "EADDRINUSE" ||
      (error as { code?: string }).code === "EACCES"
    ) {
      io.stderr(`shellwright serve: ${redactText((error as Error).message)}\n`);
      return 2;
    }
    throw error;
  }
  io.stderr(
    `shellwright serve: listening on ${gateway.url} (backend ${backendName(options.backend)}${options.insecureNoAuth ? ", NO AUTH" : ""})\n`,
  );
  io.stdout(`${gateway.url}\n`);
  if (!io.signal.aborted) await new Promise((resolve) => io.signal.addEventListener("abort", resolve, { once: true }));
  io.stderr("shellwright serve: stopping\n");
  await gateway.close();
  return 0;
}

interface ParsedServeArgs {
  options: GatewayOptions;
  tokenFile: string | undefined;
  insecureNoAuth: boolean;
}

/** The flags as gateway options, or "help"; throws UsageError on a bad flag. */
export function parseServeArgs(args: string[]): ParsedServeArgs | "help" {
  const parsed = parseCommand(spec, args);
  if (parsed.help) return "help";
  const { options, tokenFile, insecureNoAuth } = serveArgs(parsed.values);
  return { options, tokenFile, insecureNoAuth };
}

function serveArgs(values: Values): ParsedServeArgs & { sources: ConfigSources } {
  const options: GatewayOptions = {};
  const set = <K extends keyof GatewayOptions>(key: K, value: GatewayOptions[K] | undefined): void => {
    if (value !== undefined) options[key] = value;
  };
  set("host", stringValue(values, "host"));
  set("port", integerValue(values, "port", 0, 65535));
  set("cwd", stringValue(values, "cwd"));
  set("maxSessions", integerValue(values, "max-sessions"));
  set("maxConcurrentExecutions", integerValue(values, "max-concurrent"));
  set("maxLongLivedPerSession", integerValue(values, "max-long-lived-per-session", 1));
  set("maxLongLivedExecutions", integerValue(values, "max-long-lived", 1));
  set("idleTimeoutMs", integerValue(values, "idle-timeout-ms"));
  set("maxBodyBytes", integerValue(values, "max-body-bytes"));
  set("poolSize", poolSizeFlag(values));
  set("apis", apisFlag(values));
  const roots = values["allow-root"];
  if (Array.isArray(roots) && roots.length > 0) options.allowedRoots = roots.map(String);
  const configPath = stringValue(values, "config");
  const backendConfig = readConfigFile(configPath) as Record<string, unknown>;
  const backendName = stringValue(values, "backend");
  options.backend = {
    ...backendConfig,
    ...(backendName === undefined ? {} : { backend: backendName }),
    ...sandboxFlag(values, backendName ?? (backendConfig.backend as string | undefined)),
  } as EnvironmentConfig;
  return {
    options,
    tokenFile: stringValue(values, "token-file"),
    insecureNoAuth: values["insecure-no-auth"] === true,
    sources: {
      config: options.backend,
      values,
      flags: { backend: "backend", sandbox: "sandbox", cwd: "cwd", poolSize: "pool-size", allowedRoots: "allow-root" },
      file: { path: configPath, config: backendConfig },
    },
  };
}

/** `--api a,b`: the names as given, for startGateway to validate (its message names the option). */
function apisFlag(values: Values): ApiName[] | undefined {
  const flag = stringValue(values, "api");
  if (flag === undefined) return undefined;
  const names = flag.split(",").map((name) => name.trim());
  try {
    return apiNames(names);
  } catch (error) {
    throw new UsageError(`--api: ${(error as Error).message}`);
  }
}

// `node dist/cli/serve.js …` runs it directly (as the process tests do); imported, it only exports.
if (isEntryPoint()) process.exitCode = await main(process.argv.slice(2));

function isEntryPoint(): boolean {
  try {
    return process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}
