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
import { SSH_KEYS, normalizeSshConfig, type SshConfigOptions } from "./ssh-config.js";
import { SshTransport } from "./ssh.js";

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

export interface SshConfig extends CommonConfig, SshConfigOptions {
  backend: "ssh";
}

export type EnvironmentConfig = LocalConfig | SshConfig;
export type Environment = Session;

export const BACKENDS = ["local", "ssh"] as const;
export type BackendName = (typeof BACKENDS)[number];

const COMMON_KEYS = ["backend", "cwd", "timeoutMs", "maxOutputChars", "outputHeadFraction", "killGraceMs", "initTimeoutMs", "onWarning", "resume"] as const;

export async function createEnvironment(config: EnvironmentConfig = {}): Promise<Environment> {
  const raw = plainObject("config", config);
  const backend = raw.backend ?? "local";
  if (!(BACKENDS as readonly unknown[]).includes(backend)) {
    throw new InvalidOptionError("backend", `Unknown backend ${describe(backend)}; available: ${BACKENDS.join(", ")}`);
  }
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
