/**
 * The options every backend takes, their validation, and the typed key list
 * each backend builds its own list from, so a backend's config type and the
 * names it accepts cannot drift apart.
 */

import { InvalidOptionError } from "../../core/errors.js";
import {
  describe,
  fraction,
  optionalShellString,
  plainObject,
  positiveInteger,
  positiveNumber,
} from "../../core/options.js";
import type { SessionState } from "../../core/environment.js";
import type { SessionOptions } from "../../core/session.js";

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
  /** Receives warnings (a failed init, a deprecated option). @default writes to stderr */
  onWarning?: (message: string) => void;
  /** Reattach to an existing session (see Session.state()). */
  resume?: SessionState;
}

/** The common options that tune the session itself (what a gateway client passes on to the server). */
export const SESSION_KEYS = [
  "cwd",
  "timeoutMs",
  "maxOutputChars",
  "outputHeadFraction",
  "killGraceMs",
  "initTimeoutMs",
] as const;

export const COMMON_KEYS = ["backend", ...SESSION_KEYS, "onWarning", "resume"] as const;

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
  const warn = config.onWarning ?? ((message: string) => process.stderr.write(`shellwright: warning: ${message}\n`));
  if (typeof warn !== "function")
    throw new InvalidOptionError("onWarning", `onWarning must be a function, got ${describe(warn)}`);
  return warn as (message: string) => void;
}

/** The common options, validated, with their defaults; `defaultCwd` is the backend's. */
export function sessionOptions(config: CommonConfig, defaultCwd: string): SessionOptions {
  const warn = warningSink(config);
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
