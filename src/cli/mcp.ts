/**
 * `shellwright mcp [--backend NAME] [--cwd DIR] [--config FILE.json]
 *                  [--http [--host ADDR] [--port N] [--token-file FILE] [--insecure-no-auth]]`
 *
 * An MCP server: the Shellwright tools over one session, opened at the first
 * tool call and closed when the client disconnects. On stdio by default (only
 * the protocol goes to stdout). With --http, the streamable HTTP transport on
 * 127.0.0.1 with one session per client; the bearer token comes from
 * $SHELLWRIGHT_MCP_TOKEN or --token-file (mode 600), never from the command
 * line.
 */

import { BACKENDS, createEnvironment, type EnvironmentConfig } from "../backends/index.js";
import { MCP_TOKEN_ENV_VAR, scrubCredentials } from "../core/credentials.js";
import { loadToken } from "../http/token-source.js";
import { serveHttp } from "../mcp/http.js";
import { serveStdio } from "../mcp/stdio.js";
import { parseArgs, stringFlag, UsageError } from "./args.js";
import { readConfigFile } from "./config-file.js";

export const mcpUsage =
  "usage: shellwright mcp [--backend NAME] [--cwd DIR] [--config FILE.json] [--http [--host ADDR] [--port N] [--token-file FILE] [--insecure-no-auth]]";

export const TOKEN_ENV = MCP_TOKEN_ENV_VAR;

export async function main(args: string[]): Promise<number> {
  const parsed = parseArgs(
    args,
    ["backend", "cwd", "config", "host", "port", "token-file"],
    ["http", "insecure-no-auth"],
  );
  if (parsed.positionals.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}; ${mcpUsage}`);
  const config = readConfigFile(stringFlag(parsed, "config"));
  const backend = stringFlag(parsed, "backend") ?? (config.backend as string | undefined) ?? "local";
  if (!(BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(`unknown backend ${JSON.stringify(backend)}; available: ${BACKENDS.join(", ")}`);
  }
  config.backend = backend as EnvironmentConfig["backend"];
  const cwd = stringFlag(parsed, "cwd");
  if (cwd !== undefined) config.cwd = cwd;
  const createSession = () => createEnvironment(config);

  if (!parsed.flags.has("http")) {
    for (const flag of ["host", "port", "token-file", "insecure-no-auth"]) {
      if (parsed.flags.has(flag)) throw new UsageError(`--${flag} needs --http`);
    }
    await serveStdio({ createSession });
    return 0;
  }

  const port = Number(stringFlag(parsed, "port") ?? "8808");
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be a port number, got ${JSON.stringify(stringFlag(parsed, "port"))}`);
  const token = loadToken({ tokenFile: stringFlag(parsed, "token-file"), envVar: TOKEN_ENV });
  // Read once; from here on no child of this server (a session's bash, ssh, docker) inherits it.
  scrubCredentials();
  const server = await serveHttp({
    createSession,
    host: stringFlag(parsed, "host") ?? "127.0.0.1",
    port,
    ...(token === undefined ? {} : { token }),
    insecureNoAuth: parsed.flags.has("insecure-no-auth"),
  });
  process.stderr.write(
    `shellwright: MCP server on ${server.url}${token === undefined ? " (no token: loopback only)" : ""}\n`,
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.close();
  return 0;
}
