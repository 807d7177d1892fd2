import type { Environment, SessionState } from "./environment.js";

/**
 * Puts the helper (native/swmux.c) into the backend through `execute` and
 * resolves its path there: for a session whose fast path has no copy of its own.
 */
export type HelperInstaller = (environment: Environment) => Promise<string>;

/** What a Session is opened with, normalised once by the backend's config (backends/shared/config.ts). */
export interface SessionOptions {
  /** The session's first cwd; `~` is expanded by bash on the backend. */
  cwd: string;
  /** Default per-command timeout. */
  timeoutMs: number;
  /** Output kept in memory per command (head + tail), in UTF-8 bytes. */
  maxOutputBytes: number;
  /** Share of maxOutputBytes kept from the start of the output. */
  outputHeadFraction: number;
  /** Wait between SIGTERM and SIGKILL when a command is stopped. */
  killGraceMs: number;
  /** Limit for the one-time snapshot bootstrap. */
  initTimeoutMs: number;
  warn: (message: string) => void;
  /** Reattach to a session whose snapshot already exists (the CLI's named sessions). */
  resume?: SessionState;
  /** Values the tools mask in what a model sees (Environment.secretValues). @default none */
  secretValues?: readonly string[];
  /** How the session's helper is installed when its fast path has none (Environment.helperPath). @default none */
  installHelper?: HelperInstaller;
}
