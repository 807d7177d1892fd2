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
  stringRecord,
} from "../core/options.js";
import { Session, type SessionOptions, type SessionState } from "../core/session.js";
import { LocalTransport } from "./local.js";
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

export type EnvironmentConfig = LocalConfig | DockerConfig;
export type Environment = Session;

export const BACKENDS = ["local", "docker"] as const;
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
  rejectUnknown("local backend", raw, [...COMMON_KEYS, "env", "stateDir", "bashPath"]);
  const local = raw as LocalConfig;
  const transport = new LocalTransport({
    env: stringRecord("env", local.env),
    stateDir: optionalShellString("stateDir", local.stateDir),
    bashPath: optionalShellString("bashPath", local.bashPath),
  });
  return Session.open(transport, sessionOptions(local, process.cwd()));
}

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
