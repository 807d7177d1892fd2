/**
 * The options every backend takes, their validation, and the typed key list
 * each backend builds its own list from, so a backend's config type and the
 * names it accepts cannot drift apart.
 */

import { InvalidOptionError } from "../../core/errors.js";
import { isSecretName, secretEnvValues } from "../../core/redact.js";
import {
  describe,
  describeSecret,
  fraction,
  optionalShellString,
  plainObject,
  positiveInteger,
  positiveNumber,
} from "../../core/options.js";
import type { SessionState } from "../../core/environment.js";
import type { SessionOptions } from "../../core/session-options.js";
import { spelling } from "./resource-options.js";
import { writeStderr } from "../../core/stderr.js";
import { installHelperThroughExecute } from "./helper-install.js";

/** Options every backend takes. */
export interface CommonConfig {
  /**
   * The session's first working directory; `~` is expanded by bash on the backend.
   * @default the current directory (local)
   */
  cwd?: string;
  /** @default 180000 */
  timeoutMs?: number;
  /** Output kept per command, head and tail, in bytes (of UTF-8). @default 50000 */
  maxOutputBytes?: number;
  /** @deprecated The old name of `maxOutputBytes`, which it always counted in bytes; accepted with a warning. */
  maxOutputChars?: number;
  /** Share of maxOutputBytes kept from the start. @default 0.4 */
  outputHeadFraction?: number;
  /** Between SIGTERM and SIGKILL when a command is stopped. @default 1000 */
  killGraceMs?: number;
  /** Limit for the one-time snapshot bootstrap. @default 30000 */
  initTimeoutMs?: number;
  /** Receives warnings (a failed init, a deprecated option). @default writes to stderr */
  onWarning?: (message: string) => void;
  /** Reattach to an existing session (see Session.state()). */
  resume?: SessionState;
  /**
   * Values the tools mask in what the model sees, on top of the values of
   * `env` (and docker's `forwardEnv`) variables whose names look secret
   * (`*TOKEN*`, `*SECRET*`, `*KEY*`, `*PASSWORD*`, `*CREDENTIAL*`). Values under
   * 6 characters are not masked. See docs/secrets.md.
   */
  secrets?: string[];
}

/**
 * `config` with its output cap set to `maxOutputBytes`, whichever spelling
 * it had: a later choice (a CLI flag, a gateway client's request) replaces
 * the earlier one instead of meeting it as "both spellings at once".
 */
export function withOutputCap<T extends object>(config: T, maxOutputBytes: number | undefined): T {
  if (maxOutputBytes === undefined) return config;
  const capped: Record<string, unknown> = { ...config, maxOutputBytes };
  delete capped.maxOutputChars;
  return capped as T;
}

/**
 * An option of a backend that a warm pool must refuse: one that would make
 * its members share what a fresh session must not (a container, a state dir,
 * a named sandbox, processes that outlive the session). Each backend declares
 * its own (its record's `poolRefuses`), so another backend's option of the
 * same name is not refused for it.
 */
export interface PoolRefusal {
  key: string;
  /** Why, for the error: "every member needs a container of its own". */
  why: string;
  /** Whether this value is refused. @default anything but undefined and false */
  refuses?: (value: unknown) => boolean;
}

/** The common options that tune the session itself (what a gateway client passes on to the server). */
export const SESSION_KEYS = [
  "cwd",
  "timeoutMs",
  "maxOutputBytes",
  "outputHeadFraction",
  "killGraceMs",
  "initTimeoutMs",
] as const;

export const COMMON_KEYS = ["backend", ...SESSION_KEYS, "maxOutputChars", "onWarning", "resume", "secrets"] as const;

/** The options a backend adds to CommonConfig. */
export type OwnOption<T> = Exclude<keyof T & string, keyof CommonConfig | "backend">;

/**
 * A backend's accepted option names: COMMON_KEYS plus `keys`, which the
 * compiler checks against the config type both ways (a name the type lacks,
 * or an option of the type missing from `keys`, fails to compile).
 */
export function optionKeys<T>() {
  return <const K extends readonly OwnOption<T>[]>(
    keys: K & ([OwnOption<T>] extends [K[number]] ? unknown : { missing: Exclude<OwnOption<T>, K[number]> }),
  ): readonly string[] => [...COMMON_KEYS, ...(keys as readonly string[])];
}

/** The config's onWarning, checked, or a writer to stderr. */
export function warningSink(config: { onWarning?: unknown }): (message: string) => void {
  const warn = config.onWarning ?? ((message: string) => writeStderr(`shellwright: warning: ${message}\n`));
  if (typeof warn !== "function")
    throw new InvalidOptionError("onWarning", `onWarning must be a function, got ${describe(warn)}`);
  return warn as (message: string) => void;
}

/** The common options, validated, with their defaults; `defaultCwd` is the backend's. */
export function sessionOptions(config: CommonConfig, defaultCwd: string): SessionOptions {
  const warn = warningSink(config);
  const maxOutput = spelling(config as Record<string, unknown>, "maxOutputBytes", "maxOutputChars", warn);
  const options: SessionOptions = {
    cwd: optionalShellString("cwd", config.cwd) ?? defaultCwd,
    timeoutMs: positiveNumber("timeoutMs", config.timeoutMs, 180_000),
    maxOutputBytes: positiveInteger(maxOutput.name, maxOutput.value, 50_000),
    outputHeadFraction: fraction("outputHeadFraction", config.outputHeadFraction, 0.4),
    killGraceMs: positiveNumber("killGraceMs", config.killGraceMs, 1000),
    initTimeoutMs: positiveNumber("initTimeoutMs", config.initTimeoutMs, 30_000),
    warn,
    secretValues: secretValues(config),
    installHelper: installHelperThroughExecute,
  };
  if (config.resume !== undefined) options.resume = resumeState(config.resume);
  return options;
}

/**
 * The values the tools mask for this session: the `secrets` option, the
 * secret-looking `env` values, and the secret-looking `forwardEnv` variables'
 * values in this process's environment now (what the backend forwards).
 * Errors name the option and the position, never a value.
 */
export function secretValues(config: { env?: unknown; forwardEnv?: unknown; secrets?: unknown }): string[] {
  const values: string[] = [];
  if (config.secrets !== undefined) {
    if (!Array.isArray(config.secrets))
      throw new InvalidOptionError(
        "secrets",
        `secrets must be an array of strings, got ${describeSecret(config.secrets)}`,
      );
    config.secrets.forEach((value: unknown, index) => {
      if (typeof value !== "string" || value === "")
        throw new InvalidOptionError(
          "secrets",
          `secrets[${index}] must be a non-empty string, got ${describeSecret(value)}`,
        );
      values.push(value);
    });
  }
  if (typeof config.env === "object" && config.env !== null)
    values.push(...secretEnvValues(config.env as Record<string, string | undefined>));
  if (Array.isArray(config.forwardEnv)) {
    for (const name of config.forwardEnv) {
      const value = typeof name === "string" && isSecretName(name) ? process.env[name] : undefined;
      if (value !== undefined && value !== "") values.push(value);
    }
  }
  return [...new Set(values)];
}

function resumeState(value: unknown): SessionState {
  const state = plainObject("resume", value);
  if (typeof state.sessionId !== "string" || !/^[0-9a-f]{12}$/.test(state.sessionId)) {
    throw new InvalidOptionError(
      "resume.sessionId",
      `resume.sessionId must be 12 hex digits, got ${describe(state.sessionId)}`,
    );
  }
  if (typeof state.snapshotReady !== "boolean") {
    throw new InvalidOptionError(
      "resume.snapshotReady",
      `resume.snapshotReady must be a boolean, got ${describe(state.snapshotReady)}`,
    );
  }
  return {
    sessionId: state.sessionId,
    cwd: optionalShellString("resume.cwd", state.cwd) ?? "~",
    snapshotReady: state.snapshotReady,
  };
}
