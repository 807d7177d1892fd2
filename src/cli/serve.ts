/**
 * `shellwright serve`: runs a gateway until SIGINT or SIGTERM.
 *
 * The token comes from --token-file (mode 600) or $SHELLWRIGHT_GATEWAY_TOKEN,
 * never from a flag: a flag would show in `ps`.
 */

import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { isShellwrightError } from "../core/errors.js";
import { UsageError } from "./args.js";
import { readConfigFile } from "./config-file.js";
import type { EnvironmentConfig } from "../backends/index.js";
import { scrubCredentials } from "../core/credentials.js";
import { loadToken, TokenSourceError } from "../http/token-source.js";
import { DEFAULT_GATEWAY_PORT, TOKEN_ENV_VAR } from "../backends/gateway/protocol.js";
import { startGateway, type GatewayOptions } from "../gateway/server.js";

export const USAGE = `Usage: shellwright serve [options]

Hosts shell sessions over HTTP for the \`gateway\` backend (API: docs/gateway.md).

Options:
  --host HOST              address to bind (default 127.0.0.1)
  --port N                 port, 0 for any free one (default ${DEFAULT_GATEWAY_PORT})
  --token-file PATH        file holding the bearer token, mode 600
                           (default: $${TOKEN_ENV_VAR})
  --insecure-no-auth       serve without a token (loopback only)
  --backend NAME           backend the sessions run on (default local)
  --backend-config FILE    JSON object of backend options (image, host, …)
  --allow-root DIR         a cwd requests may use must lie under DIR;
                           repeatable (default: the --cwd directory)
  --cwd DIR                cwd of a new session (default: first --allow-root,
                           else the current directory)
  --max-sessions N         (default 64)
  --max-concurrent N       executions at once across sessions (default 32)
  --idle-timeout-ms N      close a session idle this long (default 1800000)
  --max-body-bytes N       request body limit (default 8388608)
  -h, --help

Prints the gateway's URL on stdout once it listens.`;

export interface ServeIo {
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Aborting stops the server (main() wires SIGINT and SIGTERM to it). */
  signal: AbortSignal;
}

export async function main(args: string[]): Promise<number> {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return await serve(args, {
      env: process.env,
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
      signal: stop.signal,
    });
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** main() with its inputs and outputs passed in; resolves with the exit code once the server has stopped. */
export async function serve(args: string[], io: ServeIo): Promise<number> {
  let options: GatewayOptions;
  try {
    const parsed = parseServeArgs(args);
    if (parsed === "help") {
      io.stdout(`${USAGE}\n`);
      return 0;
    }
    const token = loadToken({ tokenFile: parsed.tokenFile, envVar: TOKEN_ENV_VAR, env: io.env });
    // Read once; from here on no child of this server (a session's bash, ssh, docker) inherits it.
    scrubCredentials(io.env);
    if (token === undefined && !parsed.insecureNoAuth) {
      throw new UsageError(
        `no token: set $${TOKEN_ENV_VAR} or pass --token-file PATH (or --insecure-no-auth on loopback)`,
      );
    }
    options = {
      ...parsed.options,
      ...(token === undefined ? { insecureNoAuth: true } : { token }),
      log: (m) => io.stderr(`shellwright serve: ${m}\n`),
    };
    if (token !== undefined && parsed.insecureNoAuth)
      throw new UsageError("--insecure-no-auth was given but a token is set; drop one of them");
  } catch (error) {
    if (error instanceof UsageError || error instanceof TokenSourceError) {
      io.stderr(`shellwright serve: ${error.message}\n`);
      return 2;
    }
    throw error;
  }

  let gateway;
  try {
    gateway = await startGateway(options);
  } catch (error) {
    if (
      isShellwrightError(error) ||
      (error as { code?: string }).code === "EADDRINUSE" ||
      (error as { code?: string }).code === "EACCES"
    ) {
      io.stderr(`shellwright serve: ${(error as Error).message}\n`);
      return 2;
    }
    throw error;
  }
  io.stderr(
    `shellwright serve: listening on ${gateway.url} (backend ${options.backend?.backend ?? "local"}${options.insecureNoAuth ? ", NO AUTH" : ""})\n`,
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

export function parseServeArgs(args: string[]): ParsedServeArgs | "help" {
  const options: GatewayOptions = {};
  const roots: string[] = [];
  let tokenFile: string | undefined;
  let insecureNoAuth = false;
  let backendName: string | undefined;
  let backendConfig: Record<string, unknown> = {};
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]!;
    const value = (): string => {
      const next = args[++i];
      if (next === undefined) throw new UsageError(`${flag} needs a value`);
      return next;
    };
    const integer = (): number => {
      const text = value();
      if (!/^\d+$/.test(text)) throw new UsageError(`${flag} needs a whole number, got ${JSON.stringify(text)}`);
      return Number(text);
    };
    switch (flag) {
      case "-h":
      case "--help":
        return "help";
      case "--host":
        options.host = value();
        break;
      case "--port":
        options.port = integer();
        break;
      case "--token-file":
        tokenFile = value();
        break;
      case "--insecure-no-auth":
        insecureNoAuth = true;
        break;
      case "--backend":
        backendName = value();
        break;
      case "--backend-config":
        backendConfig = readConfigFile(value(), "--backend-config") as Record<string, unknown>;
        break;
      case "--allow-root":
        roots.push(value());
        break;
      case "--cwd":
        options.cwd = value();
        break;
      case "--max-sessions":
        options.maxSessions = integer();
        break;
      case "--max-concurrent":
        options.maxConcurrentExecutions = integer();
        break;
      case "--idle-timeout-ms":
        options.idleTimeoutMs = integer();
        break;
      case "--max-body-bytes":
        options.maxBodyBytes = integer();
        break;
      default:
        throw new UsageError(`unknown option ${JSON.stringify(flag)}; see shellwright serve --help`);
    }
  }
  if (roots.length > 0) options.allowedRoots = roots;
  options.backend = {
    ...backendConfig,
    ...(backendName === undefined ? {} : { backend: backendName }),
  } as EnvironmentConfig;
  return { options, tokenFile, insecureNoAuth };
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
