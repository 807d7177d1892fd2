/**
 * createEnvironment(config): validates the config once, picks the backend's
 * Transport and opens a Session over it.
 */

import { InvalidOptionError } from "../core/errors.js";
import {
  describe,
  fraction,
  optionalShellString,
  plainObject,
  positiveInteger,
  positiveNumber,
  rejectUnknown,
  shellString,
  stringRecord,
} from "../core/options.js";
import type { Environment } from "../core/environment.js";
import { Session, type SessionOptions, type SessionState } from "../core/session.js";
import { LocalTransport } from "./local.js";
import { GatewayEnvironment } from "./gateway.js";
import { TOKEN_ENV_VAR, type CreateSessionRequest } from "../gateway/protocol.js";
import { SSH_KEYS, normalizeSshConfig, type SshConfigOptions } from "./ssh-config.js";
import { SshTransport } from "./ssh.js";
import { DockerTransport } from "./docker.js";
import { DOCKER_OPTION_KEYS, normalizeDockerOptions, type DockerOptions } from "./docker/options.js";

/** Options every backend takes. */
export interface CommonConfig {
  /**
   * The session's first working directory; `~` is expanded by bash on the backend.
   * @default the current directory (local)
   */
  cwd?: string;
  /** @default 180000 */
  timeoutMs?: number;
  /** Output kept per command, head and tail, in characters (UTF-8 bytes). @default 50000 */
  maxOutputChars?: number;
  /** Share of maxOutputChars kept from the start. @default 0.4 */
  outputHeadFraction?: number;
  /** Between SIGTERM and SIGKILL when a command is stopped. @default 1000 */
  killGraceMs?: number;
  /** Limit for the one-time snapshot bootstrap. @default 30000 */
  initTimeoutMs?: number;
  /** Receives warnings (a failed init). @default writes to stderr */
  onWarning?: (message: string) => void;
  /** Reattach to an existing session (see Session.state()). */
  resume?: SessionState;
}

export interface LocalConfig extends CommonConfig {
  backend?: "local";
  /** Variables added to this process's environment for the session. */
  env?: Record<string, string>;
  /** Directory for the session's snapshot and cwd files. @default a new private temp dir */
  stateDir?: string;
  /** @default the first bash on PATH */
  bashPath?: string;
}

/** A long-running container; every command is a `docker exec`. */
export interface DockerConfig extends CommonConfig, DockerOptions {
  backend: "docker";
  /** @default "/root" ("/workspace" with mountCwd) */
  cwd?: string;
}


export interface SshConfig extends CommonConfig, SshConfigOptions {
  backend: "ssh";
}


export interface GatewayConfig extends CommonConfig {
  backend: "gateway";
  /** Base URL of a `shellwright serve`, e.g. http://127.0.0.1:7420 */
  url: string;
  /** The gateway's bearer token. @default $SHELLWRIGHT_GATEWAY_TOKEN */
  token?: string;
  /** Variables added to the session's starting environment on the gateway's backend. */
  env?: Record<string, string>;
  /** How long to keep retrying while the gateway refuses connections (restarting). @default 3000 */
  connectRetryMs?: number;
  /** Limit for a control request (create, close, cancel); an execution waits for its own timeout on top. @default 30000 */
  requestTimeoutMs?: number;
  /** How long an execution keeps retrying while the gateway is at its execution limit (429). @default 30000 */
  busyTimeoutMs?: number;
}

export type EnvironmentConfig = LocalConfig | DockerConfig | SshConfig | GatewayConfig;
export type { Environment };

export const BACKENDS = ["local", "docker", "ssh", "gateway"] as const;
export type BackendName = (typeof BACKENDS)[number];

const COMMON_KEYS = ["backend", "cwd", "timeoutMs", "maxOutputChars", "outputHeadFraction", "killGraceMs", "initTimeoutMs", "onWarning", "resume"] as const;

export async function createEnvironment(config: EnvironmentConfig = {}): Promise<Environment> {
  const raw = plainObject("config", config);
  const backend = raw.backend ?? "local";
  if (!(BACKENDS as readonly unknown[]).includes(backend)) {
    throw new InvalidOptionError("backend", `Unknown backend ${describe(backend)}; available: ${BACKENDS.join(", ")}`);
  }
  if (backend === "docker") {
    rejectUnknown("docker backend", raw, [...COMMON_KEYS, ...DOCKER_OPTION_KEYS]);
    const docker = normalizeDockerOptions(raw);
    return Session.open(new DockerTransport(docker), sessionOptions(raw as CommonConfig, docker.mountCwd === undefined ? "/root" : "/workspace"));
  }
  if (backend === "gateway") return openGateway(raw);
  if (backend === "ssh") {
    rejectUnknown("ssh backend", raw, [...COMMON_KEYS, ...SSH_KEYS]);
    const options = sessionOptions(raw as CommonConfig, "~");
    return Session.open(new SshTransport(normalizeSshConfig(raw, options.warn)), options);
  }
  rejectUnknown("local backend", raw, [...COMMON_KEYS, "env", "stateDir", "bashPath"]);
  const local = raw as LocalConfig;
  const transport = new LocalTransport({
    env: stringRecord("env", local.env),
    stateDir: optionalShellString("stateDir", local.stateDir),
    bashPath: optionalShellString("bashPath", local.bashPath),
  });
  return Session.open(transport, sessionOptions(local, process.cwd()));
}

async function openGateway(raw: Record<string, unknown>): Promise<Environment> {
  rejectUnknown("gateway backend", raw, [...COMMON_KEYS, "url", "token", "env", "connectRetryMs", "requestTimeoutMs", "busyTimeoutMs"]);
  const config = raw as unknown as GatewayConfig;
  let url: URL;
  try {
    url = new URL(shellString("url", config.url));
  } catch (error) {
    if (error instanceof InvalidOptionError) throw error;
    throw new InvalidOptionError("url", `url must be an http:// or https:// URL, got ${describe(config.url)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new InvalidOptionError("url", `url must be an http:// or https:// URL, got ${describe(config.url)}`);
  const token = config.token ?? process.env[TOKEN_ENV_VAR];
  if (token !== undefined && (typeof token !== "string" || token === "" || /\s/.test(token))) {
    throw new InvalidOptionError("token", "token must be a non-empty string without whitespace");
  }
  const session = sessionOptions(config, "~");
  if (url.protocol === "http:" && token !== undefined && !isLoopbackHost(url.hostname)) {
    session.warn(`the gateway token is sent unencrypted to ${url.host}; use https:// or a loopback address`);
  }
  // Only what the caller chose goes to the gateway; the gateway's config fills the rest.
  const request: CreateSessionRequest = {};
  for (const key of ["cwd", "timeoutMs", "maxOutputChars", "outputHeadFraction", "killGraceMs", "initTimeoutMs"] as const) {
    if (config[key] !== undefined) Object.assign(request, { [key]: session[key] });
  }
  if (config.env !== undefined) request.env = stringRecord("env", config.env);
  return GatewayEnvironment.open(
    {
      url,
      token,
      connectRetryMs: nonNegativeNumber("connectRetryMs", config.connectRetryMs, 3000),
      requestTimeoutMs: positiveNumber("requestTimeoutMs", config.requestTimeoutMs, 30_000),
      busyTimeoutMs: nonNegativeNumber("busyTimeoutMs", config.busyTimeoutMs, 30_000),
      timeoutMs: session.timeoutMs,
      killGraceMs: session.killGraceMs,
      maxOutputChars: session.maxOutputChars,
      outputHeadFraction: session.outputHeadFraction,
      warn: session.warn,
    },
    request,
    session.resume,
  );
}

function nonNegativeNumber(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new InvalidOptionError(name, `${name} must be a number of milliseconds, 0 or more, got ${describe(value)}`);
  }
  return value;
}

const isLoopbackHost = (host: string): boolean => host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);

function sessionOptions(config: CommonConfig, defaultCwd: string): SessionOptions {
  const warn = config.onWarning ?? ((message: string) => process.stderr.write(`shellwright: warning: ${message}\n`));
  if (typeof warn !== "function") throw new InvalidOptionError("onWarning", `onWarning must be a function, got ${describe(warn)}`);
  const options: SessionOptions = {
    cwd: optionalShellString("cwd", config.cwd) ?? defaultCwd,
    timeoutMs: positiveNumber("timeoutMs", config.timeoutMs, 180_000),
    maxOutputChars: positiveInteger("maxOutputChars", config.maxOutputChars, 50_000),
    outputHeadFraction: fraction("outputHeadFraction", config.outputHeadFraction, 0.4),
    killGraceMs: positiveNumber("killGraceMs", config.killGraceMs, 1000),
    initTimeoutMs: positiveNumber("initTimeoutMs", config.initTimeoutMs, 30_000),
    warn,
  };
  if (config.resume !== undefined) options.resume = resumeState(config.resume);
  return options;
}

function resumeState(value: unknown): SessionState {
  const state = plainObject("resume", value);
  if (typeof state.sessionId !== "string" || !/^[0-9a-f]{12}$/.test(state.sessionId)) {
    throw new InvalidOptionError("resume.sessionId", `resume.sessionId must be 12 hex digits, got ${describe(state.sessionId)}`);
  }
  if (typeof state.snapshotReady !== "boolean") {
    throw new InvalidOptionError("resume.snapshotReady", `resume.snapshotReady must be a boolean, got ${describe(state.snapshotReady)}`);
  }
  return { sessionId: state.sessionId, cwd: optionalShellString("resume.cwd", state.cwd) ?? "~", snapshotReady: state.snapshotReady };
}
