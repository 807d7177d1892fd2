/**
 * `shellwright mcp [options]` (flags: specs.ts).
 *
 * An MCP server: the Shellwright tools over one session, opened at the first
 * tool call and closed when the client disconnects. On stdio by default (only
 * the protocol goes to stdout). With --http, the streamable HTTP transport on
 * 127.0.0.1 with one session per client; the bearer token comes from
 * $SHELLWRIGHT_MCP_TOKEN or --token-file (mode 600), never from the command
 * line.
 */

import {
  BACKENDS,
  checkStart,
  createEnvironment,
  DEFAULT_BACKEND,
  hideFromSandboxes,
  type EnvironmentConfig,
} from "../backends/index.js";
import { MCP_TOKEN_ENV_VAR, scrubCredentials } from "../core/credentials.js";
import { loadToken } from "../http/token-source.js";
import { serveHttp } from "../mcp/http.js";
import { serveStdio } from "../mcp/stdio.js";
import { MAX_MESSAGE_BYTES } from "../mcp/stdio-transport.js";
import { integerValue, parseCommand, sandboxFlag, stringValue, UsageError, type ParsedCommand } from "./args.js";
import { readConfigFile } from "./config-file.js";
import { noTokenCheck } from "./no-token.js";
import { inCliWords, type ConfigSources } from "./option-words.js";
import { poolSizeFlag } from "./pool-flag.js";
import { createEnvironmentPool } from "../pool/create-pool.js";
import { mcp as spec } from "./specs.js";
import { TOOLS } from "../tools/registry.js";
import { UNIFIED_EXEC_TOOLS } from "../tools/unified-exec/unified-exec.js";
import { writeStderr } from "../core/stderr.js";
import { toolSets } from "../tools/tool-sets.js";

export const TOKEN_ENV = MCP_TOKEN_ENV_VAR;

/** From raw arguments, for a process that runs the server without main.ts (the tests' fixture, the bench). */
export function main(args: string[]): Promise<number> {
  return run(parseCommand(spec, args));
}

export async function run(parsed: ParsedCommand): Promise<number> {
  const { values } = parsed;
  const configPath = stringValue(values, "config");
  const config = readConfigFile(configPath);
  // The flags below are written into the file's object: what the file itself said is kept apart.
  const fileConfig = { ...config };
  const backend = stringValue(values, "backend") ?? (config.backend as string | undefined) ?? DEFAULT_BACKEND;
  if (!(BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(`unknown backend ${JSON.stringify(backend)}; available: ${BACKENDS.join(", ")}`);
  }
  // The default backend is left for the library to pick, so a file with `host` and no `backend` is blamed on that.
  if (values.backend !== undefined) config.backend = backend as EnvironmentConfig["backend"];
  Object.assign(config, sandboxFlag(values, backend));
  const cwd = stringValue(values, "cwd");
  if (cwd !== undefined) config.cwd = cwd;
  const poolSize = poolSizeFlag(values);
  // The pool is opened only once the flags are known good (below, with --http).
  const sources: ConfigSources = {
    config,
    values,
    flags: { backend: "backend", sandbox: "sandbox", cwd: "cwd" },
    file: { path: configPath, config: fileConfig },
  };
  const cliWords = (error: unknown): never => {
    throw inCliWords(error, sources);
  };
  // On stdio the refusal reaches the model as a tool result, for the user who started this server.
  let createSession = () => createEnvironment(config).catch(cliWords);
  // The cap the model sees is the terminal tool's inline output.
  const maxOutputBytes = integerValue(values, "max-output-bytes", 1);
  const settings = {
    ...(maxOutputBytes === undefined ? {} : { inlineOutputChars: maxOutputBytes }),
    ...(values["no-redact"] === true ? { redactSecrets: false } : {}),
  };
  const toolsFlag = stringValue(values, "tools");
  let tools;
  try {
    tools = toolsFlag === undefined ? undefined : toolSets(toolsFlag);
  } catch (error) {
    throw new UsageError(`--tools: ${(error as Error).message}`);
  }
  if (values["unified-exec"] === true) tools = [...(tools ?? TOOLS), ...UNIFIED_EXEC_TOOLS];
  // One flag for both transports: a line on stdio, a request body over HTTP.
  const maxMessageBytes = integerValue(values, "max-message-bytes", 1, MAX_MESSAGE_BYTES);
  const common = {
    createSession,
    ...(Object.keys(settings).length === 0 ? {} : { settings }),
    ...(tools === undefined ? {} : { tools }),
  };

  // Checked before the server says it is ready: a session opened at the first tool call would fail where only the
  // model reads it, and the MCP host would show "Connected".
  await checkStart(config, config).catch(cliWords);

  if (values.http !== true) {
    // One session per process on stdio: a pool would only keep a second one open.
    for (const flag of ["host", "port", "token-file", "insecure-no-auth", "pool-size"]) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} needs --http`);
    }
    await serveStdio({ ...common, ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }) });
    return 0;
  }

  const port = integerValue(values, "port", 0, 65535) ?? 8808;
  const host = stringValue(values, "host") ?? "127.0.0.1";
  const insecureNoAuth = values["insecure-no-auth"] === true;
  const tokenFile = stringValue(values, "token-file");
  const token = loadToken({ tokenFile, envVar: TOKEN_ENV });
  // The server's own token: hidden from a sandboxed session, and masked by the tools in every session it opens.
  if (tokenFile !== undefined) hideFromSandboxes(tokenFile);
  // (A `secrets` that is not a list is left for createEnvironment to refuse by name.)
  if (token !== undefined && (config.secrets === undefined || Array.isArray(config.secrets)))
    config.secrets = [...((config.secrets as string[] | undefined) ?? []), token];
  // Read once; from here on no child of this server (a session's bash, ssh, docker) inherits it.
  scrubCredentials();
  // Checked here, in the flags' words: serveHttp's own refusal names its options (insecureNoAuth).
  if (token === undefined) noTokenCheck({ insecureNoAuth, host, envVar: TOKEN_ENV });
  // Listening for the stop signals before the address is announced: a client
  // that reads the address and stops the server at once must find them set.
  let stop = (): void => undefined;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  // Each client's session comes from the pool (docs/pools.md); a config the pool refuses fails here.
  const pool =
    poolSize === undefined ? undefined : await createEnvironmentPool(config, { size: poolSize }).catch(cliWords);
  if (pool !== undefined) createSession = () => pool.acquire();
  try {
    const server = await serveHttp({
      ...common,
      createSession,
      host,
      port,
      ...(token === undefined ? {} : { token }),
      insecureNoAuth,
      ...(maxMessageBytes === undefined ? {} : { maxBodyBytes: maxMessageBytes }),
    });
    writeStderr(`shellwright: MCP server on ${server.url}${token === undefined ? " (no token: loopback only)" : ""}\n`);
    await stopped;
    await server.close();
    return 0;
  } finally {
    await pool?.close();
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}
